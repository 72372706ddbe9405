// The built-in Kubernetes resources Tessera reads and writes, and their REST paths (Tessera's own
// resources are in services/api/group.ts).

/** A resource: API group ("" = core), version and plural name. */
export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
}

export const PODS: ResourceRef = { group: "", version: "v1", resource: "pods" };
export const SERVICES: ResourceRef = { group: "", version: "v1", resource: "services" };
export const EVENTS: ResourceRef = { group: "", version: "v1", resource: "events" };
export const SECRETS: ResourceRef = { group: "", version: "v1", resource: "secrets" };
export const SERVICE_ACCOUNTS: ResourceRef = { group: "", version: "v1", resource: "serviceaccounts" };
export const DEPLOYMENTS: ResourceRef = { group: "apps", version: "v1", resource: "deployments" };
export const ROLES: ResourceRef = { group: "rbac.authorization.k8s.io", version: "v1", resource: "roles" };
export const ROLE_BINDINGS: ResourceRef = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  resource: "rolebindings",
};
export const POD_DISRUPTION_BUDGETS: ResourceRef = {
  group: "policy",
  version: "v1",
  resource: "poddisruptionbudgets",
};
export const LEASES: ResourceRef = { group: "coordination.k8s.io", version: "v1", resource: "leases" };

/** `/api/v1/namespaces/ns/pods/name/status`; namespace "" means all namespaces (lists, watches). */
export function resourcePath(
  ref: ResourceRef,
  namespace: string,
  name?: string,
  subresource?: string,
): string {
  const base = ref.group === "" ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const tail =
    name === undefined ? "" : `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}`;
  return `${base}${ns}/${ref.resource}${tail}`;
}

// Built-in kinds outside core and apps: endpoint slices, leases, disruption budgets, RBAC and CRDs.
import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import { isJsonObject } from "../core/json-object.ts";
import { column, defineKind } from "./define-kind.ts";
import { listAt, objectAt, stringAt } from "./object-fields.ts";
import { atomicList, mapList } from "./type-info.ts";

export const endpointSliceKind = defineKind({
  group: "discovery.k8s.io",
  version: "v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
  fields: { endpoints: atomicList, ports: atomicList },
  columns: [
    column("AddressType", (o) => stringAt(o, "addressType") ?? ""),
    column(
      "Ports",
      (o) =>
        listAt(o, "ports")
          .map((p) => (isJsonObject(p) ? String(p["port"] ?? "") : ""))
          .join(",") || "<unset>",
    ),
    column(
      "Endpoints",
      (o) =>
        listAt(o, "endpoints")
          .flatMap((e) => (isJsonObject(e) && Array.isArray(e["addresses"]) ? e["addresses"] : []))
          .join(",") || "<unset>",
    ),
  ],
});

export const leaseKind = defineKind({
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
  columns: [column("Holder", (o) => stringAt(o, "spec", "holderIdentity") ?? "")],
});

/** Stored and served; no disruption controller fills its status, and nothing here evicts pods. */
export const podDisruptionBudgetKind = defineKind({
  group: "policy",
  version: "v1",
  kind: "PodDisruptionBudget",
  plural: "poddisruptionbudgets",
  shortNames: ["pdb"],
  namespaced: true,
  columns: [
    column("Min Available", (o) => String(objectAt(o, "spec")?.["minAvailable"] ?? "N/A")),
    column("Max Unavailable", (o) => String(objectAt(o, "spec")?.["maxUnavailable"] ?? "N/A")),
    column("Allowed Disruptions", (o) => String(objectAt(o, "status")?.["disruptionsAllowed"] ?? 0)),
  ],
});

const rbac = { group: "rbac.authorization.k8s.io", version: "v1", nameRule: "path-segment" as const };
const createdAt = column("Created At", (o) => o.metadata.creationTimestamp ?? "", { type: "date" });
const roleRef = column(
  "Role",
  (o) => `${stringAt(o, "roleRef", "kind") ?? ""}/${stringAt(o, "roleRef", "name") ?? ""}`,
);

export const roleKind = defineKind({
  ...rbac,
  kind: "Role",
  plural: "roles",
  namespaced: true,
  noAge: true,
  fields: { rules: atomicList },
  columns: [createdAt],
});
export const clusterRoleKind = defineKind({
  ...rbac,
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
  noAge: true,
  fields: { rules: atomicList },
  columns: [createdAt],
});
export const roleBindingKind = defineKind({
  ...rbac,
  kind: "RoleBinding",
  plural: "rolebindings",
  namespaced: true,
  fields: { subjects: atomicList },
  columns: [roleRef],
});
export const clusterRoleBindingKind = defineKind({
  ...rbac,
  kind: "ClusterRoleBinding",
  plural: "clusterrolebindings",
  namespaced: false,
  fields: { subjects: atomicList },
  columns: [roleRef],
});

export const crdKind = defineKind({
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
  shortNames: ["crd", "crds"],
  categories: ["api-extensions"],
  status: true,
  noAge: true,
  fields: {
    spec: { fields: { versions: mapList(["name"]) } },
    status: { fields: { conditions: mapList(["type"]) } },
  },
  columns: [createdAt],
});

export const otherKinds = [
  endpointSliceKind,
  leaseKind,
  podDisruptionBudgetKind,
  roleKind,
  clusterRoleKind,
  roleBindingKind,
  clusterRoleBindingKind,
  crdKind,
];

export function crdNames(crd: { spec?: unknown }): JsonObject {
  return objectAt(crd, "spec", "names") ?? {};
}

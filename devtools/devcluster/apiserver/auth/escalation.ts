// RBAC's escalation prevention, as kube-apiserver enforces it: a user may create or update a Role or
// ClusterRole only with rules it holds itself (where the role applies), unless it may `escalate`
// roles; and a RoleBinding or ClusterRoleBinding only to a role whose rules it holds, unless it may
// `bind` that role. This is what makes the operator hold every permission of the router Role it
// creates. Refusals are 403 with kube-apiserver's wording.
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { statusError } from "../core/api-status.ts";
import type { ResourceType } from "../resources/resource-type.ts";
import { type PolicyRule, type RbacAuthorizer, type RoleRef, ruleAllows } from "./rbac-authorizer.ts";
import type { RequestAttributes } from "./request-attributes.ts";
import { MASTERS_GROUP, type UserInfo } from "./user-info.ts";

const RBAC = "rbac.authorization.k8s.io";

/** Every single permission a rule grants (verb x group x resource x name, or verb x path). */
function permissions(rule: PolicyRule): RequestAttributes[] {
  const out: RequestAttributes[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const path of rule.nonResourceURLs ?? []) out.push({ kind: "non-resource", verb, path });
    for (const apiGroup of rule.apiGroups ?? [])
      for (const combined of rule.resources ?? []) {
        const [resource = "", subresource] = combined.split("/", 2);
        const names = rule.resourceNames?.length ? rule.resourceNames : [undefined];
        for (const name of names)
          out.push({
            kind: "resource",
            verb,
            apiGroup,
            resource,
            ...(subresource !== undefined ? { subresource } : {}),
            ...(name !== undefined ? { name } : {}),
          });
      }
  }
  return out;
}

function uncovered(held: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  return wanted.filter((rule) => permissions(rule).some((p) => !held.some((h) => ruleAllows(h, p))));
}

function formatRule(rule: PolicyRule): string {
  const list = (values: string[] | undefined) =>
    `[${(values ?? []).map((v) => JSON.stringify(v)).join(" ")}]`;
  const parts = [
    rule.apiGroups ? `APIGroups:${list(rule.apiGroups)}` : "",
    rule.resources ? `Resources:${list(rule.resources)}` : "",
    rule.resourceNames?.length ? `ResourceNames:${list(rule.resourceNames)}` : "",
    rule.nonResourceURLs ? `NonResourceURLs:${list(rule.nonResourceURLs)}` : "",
    `Verbs:${list(rule.verbs)}`,
  ];
  return `{${parts.filter((p) => p !== "").join(", ")}}`;
}

function refuse(type: ResourceType, object: KubeObject, user: UserInfo, missing: PolicyRule[]): never {
  const name = object.metadata.name ?? "";
  const groups = `[${user.groups.map((g) => JSON.stringify(g)).join(" ")}]`;
  const message =
    `${type.plural}.${RBAC} "${name}" is forbidden: user "${user.name}" (groups=${groups}) is attempting to ` +
    `grant RBAC permissions not currently held:\n${missing.map(formatRule).join("\n")}`;
  throw statusError(403, "Forbidden", message, { name, group: RBAC, kind: type.plural });
}

/** Throws 403 when `user` may not write this Role, ClusterRole or binding; other objects pass. */
export function checkEscalation(
  rbac: RbacAuthorizer,
  user: UserInfo,
  type: ResourceType,
  object: KubeObject,
): void {
  if (type.group !== RBAC || user.groups.includes(MASTERS_GROUP)) return;
  const namespace = object.metadata.namespace ?? "";
  const may = (verb: string, resource: string, name: string, ns: string) =>
    rbac.authorize(user, {
      kind: "resource",
      verb,
      apiGroup: RBAC,
      resource,
      name,
      ...(ns ? { namespace: ns } : {}),
    }).allowed;
  let wanted: PolicyRule[];
  if (type.plural === "roles" || type.plural === "clusterroles") {
    if (may("escalate", type.plural, object.metadata.name ?? "", namespace)) return;
    wanted = (object["rules"] as PolicyRule[] | undefined) ?? [];
  } else if (type.plural === "rolebindings" || type.plural === "clusterrolebindings") {
    const ref = (object["roleRef"] as RoleRef | undefined) ?? { kind: "", name: "" };
    const roleResource = ref.kind === "ClusterRole" ? "clusterroles" : "roles";
    if (may("bind", roleResource, ref.name, ref.kind === "ClusterRole" ? "" : namespace)) return;
    const role = rbac.objects.get(roleResource, ref.kind === "ClusterRole" ? "" : namespace, ref.name);
    wanted = (role?.["rules"] as PolicyRule[] | undefined) ?? [];
  } else return;
  const missing = uncovered(rbac.rulesFor(user, namespace).rules, wanted);
  if (missing.length > 0) refuse(type, object, user, missing);
}

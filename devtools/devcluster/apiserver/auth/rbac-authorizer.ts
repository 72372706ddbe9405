// RBAC as kube-apiserver's authorizer evaluates it: a request is allowed when a rule of a role
// bound to the user allows it: ClusterRoleBindings everywhere, RoleBindings (to a Role of their
// namespace or to a ClusterRole) in their namespace only. A rule matches on verbs, apiGroups,
// resources (`pods`, `pods/log`, `*`, `*/status`, `pods/*`), resourceNames, or nonResourceURLs
// (exact or a `prefix*`, from ClusterRoles bound cluster-wide only); `*` matches anything.
// system:masters is allowed everything. A binding to a role that does not exist is reported as
// kube-apiserver reports it ("RBAC: role.rbac.authorization.k8s.io "x" not found").
// Aggregated ClusterRoles are not supported (their rules are used as stored).
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import type { RequestAttributes } from "./request-attributes.ts";
import { MASTERS_GROUP, type UserInfo } from "./user-info.ts";

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  kind: string;
  name: string;
  apiGroup?: string;
}

/** Where RBAC objects come from: the store, read on each decision. */
export interface RbacObjects {
  list(
    resource: "roles" | "rolebindings" | "clusterroles" | "clusterrolebindings",
    namespace?: string,
  ): KubeObject[];
  get(resource: "roles" | "clusterroles", namespace: string, name: string): KubeObject | undefined;
}

export interface Decision {
  allowed: boolean;
  /** Why not, when a binding named a missing role (empty otherwise). */
  reason: string;
}

const RBAC_GROUP = "rbac.authorization.k8s.io";

function has(values: readonly string[] | undefined, value: string): boolean {
  return values?.some((v) => v === "*" || v === value) ?? false;
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some(
    (r) =>
      r === "*" ||
      r === combined ||
      (subresource !== undefined && (r === `*/${subresource}` || r === `${resource}/*`)),
  );
}

function urlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.slice(0, -1))),
  );
}

export function ruleAllows(rule: PolicyRule, attrs: RequestAttributes): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (attrs.kind === "non-resource") return urlMatches(rule, attrs.path);
  if (!has(rule.apiGroups, attrs.apiGroup) || !resourceMatches(rule, attrs.resource, attrs.subresource))
    return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attrs.name !== undefined && names.includes(attrs.name));
}

export function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case "User":
      return subject.name === user.name;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount":
      return user.name === `system:serviceaccount:${subject.namespace || bindingNamespace}:${subject.name}`;
    default:
      return false;
  }
}

interface Binding {
  namespace: string;
  roleRef: RoleRef;
  subjects: Subject[];
}

function bindingOf(object: KubeObject): Binding {
  return {
    namespace: object.metadata.namespace ?? "",
    roleRef: (object["roleRef"] as RoleRef | undefined) ?? { kind: "", name: "" },
    subjects: (object["subjects"] as Subject[] | undefined) ?? [],
  };
}

export class RbacAuthorizer {
  readonly objects: RbacObjects;

  constructor(objects: RbacObjects) {
    this.objects = objects;
  }

  /** The rules that apply to the user in a namespace ("" for cluster-wide rules only), with the missing roles. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; missing: string[] } {
    const rules: PolicyRule[] = [];
    const missing: string[] = [];
    const bindings = this.objects.list("clusterrolebindings").map(bindingOf);
    if (namespace !== "") bindings.push(...this.objects.list("rolebindings", namespace).map(bindingOf));
    for (const binding of bindings) {
      if (!binding.subjects.some((s) => subjectMatches(s, user, binding.namespace))) continue;
      const clusterRole = binding.roleRef.kind === "ClusterRole";
      const role = clusterRole
        ? this.objects.get("clusterroles", "", binding.roleRef.name)
        : this.objects.get("roles", binding.namespace, binding.roleRef.name);
      if (!role) {
        missing.push(
          `${clusterRole ? "clusterrole" : "role"}.${RBAC_GROUP} "${binding.roleRef.name}" not found`,
        );
        continue;
      }
      rules.push(...((role["rules"] as PolicyRule[] | undefined) ?? []));
    }
    return { rules, missing };
  }

  authorize(user: UserInfo, attrs: RequestAttributes): Decision {
    if (user.groups.includes(MASTERS_GROUP)) return { allowed: true, reason: "" };
    const namespace = attrs.kind === "resource" ? (attrs.namespace ?? "") : "";
    // A path has no namespace, so only ClusterRoleBindings grant non-resource URLs.
    const { rules, missing } = this.rulesFor(user, namespace);
    if (rules.some((rule) => ruleAllows(rule, attrs))) return { allowed: true, reason: "" };
    return {
      allowed: false,
      reason:
        missing.length === 0 ? "" : `RBAC: ${missing.length === 1 ? missing[0] : `[${missing.join(", ")}]`}`,
    };
  }
}

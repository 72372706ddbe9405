import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { type PolicyRule, RbacAuthorizer, type RbacObjects } from "./rbac-authorizer.ts";
import type { RequestAttributes } from "./request-attributes.ts";
import { serviceAccountUser, type UserInfo } from "./user-info.ts";

const role = (kind: string, name: string, namespace: string, rules: PolicyRule[]): KubeObject => ({
  kind,
  metadata: { name, namespace },
  rules,
});
const binding = (
  kind: string,
  name: string,
  namespace: string,
  roleRef: object,
  subjects: object[],
): KubeObject => ({
  kind,
  metadata: { name, namespace },
  roleRef,
  subjects,
});

function authorizer(objects: KubeObject[]): RbacAuthorizer {
  const byKind: Record<string, string> = {
    Role: "roles",
    ClusterRole: "clusterroles",
    RoleBinding: "rolebindings",
    ClusterRoleBinding: "clusterrolebindings",
  };
  const source: RbacObjects = {
    list: (resource, namespace) =>
      objects.filter(
        (o) =>
          byKind[o.kind ?? ""] === resource &&
          (namespace === undefined || o.metadata.namespace === namespace),
      ),
    get: (resource, namespace, name) =>
      objects.find(
        (o) =>
          byKind[o.kind ?? ""] === resource && o.metadata.name === name && o.metadata.namespace === namespace,
      ),
  };
  return new RbacAuthorizer(source);
}

const alice: UserInfo = { name: "alice", groups: ["dev", "system:authenticated"] };
/** A resource request in namespace "team"; an `undefined` in extra removes that attribute. */
function res(
  verb: string,
  resource: string,
  extra: Record<string, string | undefined> = {},
): RequestAttributes {
  const merged: Record<string, string | undefined> = {
    verb,
    apiGroup: "",
    resource,
    namespace: "team",
    ...extra,
  };
  const defined = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined));
  return { kind: "resource", ...defined } as RequestAttributes;
}

describe("rbac-authorizer", () => {
  const rbac = authorizer([
    role("Role", "pod-reader", "team", [
      { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list"] },
    ]),
    binding("RoleBinding", "alice-pods", "team", { kind: "Role", name: "pod-reader" }, [
      { kind: "User", name: "alice" },
    ]),
    role("ClusterRole", "status-writer", "", [
      { apiGroups: ["serving.tessera.dev"], resources: ["*/status"], verbs: ["patch"] },
      { apiGroups: [""], resources: ["configmaps"], resourceNames: ["settings"], verbs: ["*"] },
    ]),
    binding("RoleBinding", "dev-status", "team", { kind: "ClusterRole", name: "status-writer" }, [
      { kind: "Group", name: "dev" },
    ]),
    role("ClusterRole", "metrics", "", [{ nonResourceURLs: ["/metrics", "/debug/*"], verbs: ["get"] }]),
    binding("ClusterRoleBinding", "metrics", "", { kind: "ClusterRole", name: "metrics" }, [
      { kind: "ServiceAccount", name: "scraper", namespace: "mon" },
    ]),
    binding("RoleBinding", "dangling", "other", { kind: "Role", name: "gone" }, [
      { kind: "User", name: "alice" },
    ]),
  ]);

  it("allows what a Role bound in the namespace grants, there only, subresources by name", () => {
    assert.equal(rbac.authorize(alice, res("list", "pods")).allowed, true);
    assert.equal(rbac.authorize(alice, res("get", "pods", { subresource: "log", name: "p" })).allowed, true);
    assert.equal(rbac.authorize(alice, res("delete", "pods", { name: "p" })).allowed, false);
    assert.equal(
      rbac.authorize(alice, res("get", "pods", { subresource: "exec", name: "p" })).allowed,
      false,
    );
    assert.equal(rbac.authorize(alice, res("list", "pods", { namespace: "prod" })).allowed, false);
    assert.equal(rbac.authorize(alice, res("list", "pods", { namespace: undefined })).allowed, false);
  });

  it("applies a ClusterRole through a RoleBinding in its namespace, with */status, resourceNames and *", () => {
    const status = { apiGroup: "serving.tessera.dev", subresource: "status", name: "m" };
    assert.equal(rbac.authorize(alice, res("patch", "inferencemodels", status)).allowed, true);
    assert.equal(
      rbac.authorize(alice, res("patch", "inferencemodels", { ...status, subresource: undefined })).allowed,
      false,
    );
    assert.equal(rbac.authorize(alice, res("delete", "configmaps", { name: "settings" })).allowed, true);
    assert.equal(rbac.authorize(alice, res("delete", "configmaps", { name: "other" })).allowed, false);
    assert.equal(
      rbac.authorize(alice, res("list", "configmaps")).allowed,
      false,
      "resourceNames never match a list",
    );
  });

  it("grants paths through ClusterRoleBindings, to a ServiceAccount subject by namespace and name", () => {
    const scraper = serviceAccountUser("mon", "scraper");
    const path = (p: string): RequestAttributes => ({ kind: "non-resource", verb: "get", path: p });
    assert.equal(rbac.authorize(scraper, path("/metrics")).allowed, true);
    assert.equal(rbac.authorize(scraper, path("/debug/pprof")).allowed, true);
    assert.equal(rbac.authorize(scraper, path("/api")).allowed, false);
    assert.equal(rbac.authorize(serviceAccountUser("other", "scraper"), path("/metrics")).allowed, false);
  });

  it("allows system:masters everything, and reports a binding to a missing role", () => {
    const admin = { name: "root", groups: ["system:masters"] };
    assert.equal(rbac.authorize(admin, res("delete", "nodes", { namespace: undefined })).allowed, true);
    assert.deepEqual(rbac.authorize(alice, res("get", "pods", { namespace: "other", name: "p" })), {
      allowed: false,
      reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found',
    });
  });
});

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../../../services/kernel/log.ts";
import { type ApiServer, startApiServer } from "../api-server.ts";
import { call } from "../http/spec-client.ts";

describe("request-auth (over HTTPS)", () => {
  let server: ApiServer;
  let dir: string;
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const whoami = async (headers: Record<string, string>, credentials: "admin" | "none" = "none") =>
    (
      await call(
        server,
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {},
        headers,
        credentials,
      )
    ).json();

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "request-auth-spec-"));
    writeFileSync(
      path.join(dir, "tokens.csv"),
      'alice-token,alice,1,"dev"\nops-token,ops,2,system:masters\n',
    );
    server = await startApiServer(
      { tokenAuthFile: path.join(dir, "tokens.csv") },
      { log: createLogger("request-auth-spec", "silent") },
    );
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("names the user of a client certificate, a static token and a service-account token", async () => {
    const admin = (await whoami({}, "admin"))["status"];
    assert.deepEqual(admin, {
      userInfo: { username: "kubernetes-admin", groups: ["system:masters", "system:authenticated"] },
    });
    assert.deepEqual((await whoami(bearer("alice-token")))["status"], {
      userInfo: { username: "alice", uid: "1", groups: ["dev", "system:authenticated"] },
    });
    await call(server, "POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "bot" } });
    const request = await call(server, "POST", "/api/v1/namespaces/default/serviceaccounts/bot/token", {
      spec: { expirationSeconds: 600 },
    });
    assert.equal(request.status, 201);
    const token = (request.json()["status"] as { token: string }).token;
    const user = (await whoami(bearer(token)))["status"] as { userInfo: { username: string } };
    assert.equal(user.userInfo.username, "system:serviceaccount:default:bot");
    const short = await call(server, "POST", "/api/v1/namespaces/default/serviceaccounts/bot/token", {
      spec: { expirationSeconds: 60 },
    });
    assert.equal(short.status, 400);
    const toSecret = await call(server, "POST", "/api/v1/namespaces/default/serviceaccounts/bot/token", {
      spec: { boundObjectRef: { kind: "Secret", name: "s" } },
    });
    assert.equal(toSecret.status, 400, "a bound object kind it cannot honour is refused");
  });

  it("refuses anonymous requests but health and version, and unknown tokens, with 401", async () => {
    assert.equal((await call(server, "GET", "/api/v1/pods", undefined, {}, "none")).status, 401);
    assert.equal((await call(server, "GET", "/api", undefined, {}, "none")).status, 401);
    assert.equal((await call(server, "GET", "/readyz", undefined, {}, "none")).status, 200);
    assert.equal((await call(server, "GET", "/version", undefined, {}, "none")).status, 200);
    assert.equal((await call(server, "GET", "/version", undefined, bearer("nope"), "none")).status, 401);
  });

  it("impersonates only with the impersonate verb, as the impersonated user's rights", async () => {
    const asBob = { ...bearer("alice-token"), "Impersonate-User": "bob" };
    const refused = await call(server, "GET", "/api/v1/namespaces/default/pods", undefined, asBob, "none");
    assert.equal(refused.status, 403);
    assert.equal(
      refused.json()["message"],
      'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const viaOps = { ...bearer("ops-token"), "Impersonate-User": "bob", "Impersonate-Group": "qa" };
    const bob = (await whoami(viaOps))["status"];
    assert.deepEqual(bob, { userInfo: { username: "bob", groups: ["qa", "system:authenticated"] } });
    const listed = await call(server, "GET", "/api/v1/namespaces/default/pods", undefined, viaOps, "none");
    assert.equal(
      listed.json()["message"],
      'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"',
    );
  });

  it("answers SelfSubjectAccessReview and SelfSubjectRulesReview from RBAC", async () => {
    const review = (attributes: object) =>
      call(
        server,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        { spec: { resourceAttributes: attributes } },
        bearer("alice-token"),
        "none",
      );
    const before = await review({ namespace: "default", verb: "get", resource: "configmaps" });
    assert.deepEqual(before.json()["status"], { allowed: false });
    await call(server, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
      metadata: { name: "dev-view" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "Group", name: "dev" }],
    });
    const after = await review({ namespace: "default", verb: "get", resource: "configmaps" });
    assert.deepEqual(after.json()["status"], { allowed: true });
    const rules = await call(
      server,
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
      { spec: { namespace: "default" } },
      bearer("alice-token"),
      "none",
    );
    const status = rules.json()["status"] as { resourceRules: { resources: string[] }[] };
    assert.ok(status.resourceRules.some((r) => r.resources.includes("configmaps")));
  });

  it("refuses a Role or binding that grants more than its creator holds, as RBAC escalation prevention", async () => {
    const RBAC = "/apis/rbac.authorization.k8s.io/v1/namespaces/team";
    await call(server, "POST", "/api/v1/namespaces", { metadata: { name: "team" } });
    await call(server, "POST", `${RBAC}/roles`, {
      metadata: { name: "granter" },
      rules: [
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles", "rolebindings"], verbs: ["create"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
      ],
    });
    await call(server, "POST", `${RBAC}/rolebindings`, {
      metadata: { name: "granter" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "granter" },
      subjects: [{ kind: "User", name: "alice" }],
    });
    const asAlice = (path: string, body: object) =>
      call(server, "POST", path, body, bearer("alice-token"), "none");
    const held = { apiGroups: [""], resources: ["pods"], verbs: ["list"] };
    assert.equal((await asAlice(`${RBAC}/roles`, { metadata: { name: "ok" }, rules: [held] })).status, 201);
    const more = await asAlice(`${RBAC}/roles`, {
      metadata: { name: "more" },
      rules: [held, { apiGroups: [""], resources: ["pods"], verbs: ["delete"] }],
    });
    assert.equal(more.status, 403);
    assert.equal(
      more.json()["message"],
      'roles.rbac.authorization.k8s.io "more" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    );
    const bindOk = await asAlice(`${RBAC}/rolebindings`, {
      metadata: { name: "ok" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "ok" },
      subjects: [{ kind: "User", name: "bob" }],
    });
    assert.equal(bindOk.status, 201);
    const bindAdmin = await asAlice(`${RBAC}/rolebindings`, {
      metadata: { name: "admin" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "User", name: "alice" }],
    });
    assert.equal(bindAdmin.status, 403);
  });
});

// Authentication and RBAC of the dev cluster, with the real kubectl: no credentials get 401, a
// token user without a binding gets kube-apiserver's 403 message, a RoleBinding allows it, `kubectl
// auth can-i` answers as the user, as an impersonated one and as a service account, and a
// kubeconfig whose user is an exec credential plugin authenticates (with kubectl and our client).
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { HttpsKubeClient } from "../../services/kube/https-client.ts";
import { loadClusterConnection } from "../../services/kube/kubeconfig.ts";
import { clientBinaries } from "./client-binaries.ts";
import { type ClusterFixture, startClusterFixture } from "./cluster-fixture.ts";

function httpsGet(url: string, ca: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    })
      .on("error", reject)
      .end();
  });
}

describe("dev cluster authentication and RBAC with kubectl (e2e)", function () {
  this.timeout(60_000);
  let f: ClusterFixture;
  const kubectl = () => clientBinaries("v35").kubectl;
  const as = (kubeconfig: string, ...args: string[]) =>
    f.run(kubectl(), ["--kubeconfig", kubeconfig, ...args]);

  /** A kubeconfig for the same cluster whose user is `user` (a kubeconfig user entry). */
  const kubeconfigFor = (name: string, user: Record<string, unknown>) => {
    const server = f.server.url;
    const ca = Buffer.from(f.server.caCert).toString("base64");
    return f.file(
      name,
      stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "dev", cluster: { server, "certificate-authority-data": ca } }],
        users: [{ name: "u", user }],
        contexts: [{ name: "dev", context: { cluster: "dev", user: "u", namespace: "default" } }],
        "current-context": "dev",
      }),
    );
  };

  let tokenDir: string;
  before(async () => {
    tokenDir = mkdtempSync(path.join(os.tmpdir(), "tessera-auth-e2e-"));
    const tokens = path.join(tokenDir, "tokens.csv");
    writeFileSync(tokens, 'alice-token,alice,1001,"dev,qa"\n');
    f = await startClusterFixture({ tokenAuthFile: tokens });
  });
  after(async () => {
    await f?.close();
    rmSync(tokenDir, { recursive: true, force: true });
  });

  it("refuses a request without credentials, or with an unknown token, with 401 Unauthorized; serves /healthz anonymously", async () => {
    // kubectl asks for a password when its user has no credentials, so the anonymous request is made directly.
    const anonymous = await httpsGet(`${f.server.url}/api/v1/namespaces/default/pods`, f.server.caCert);
    assert.equal(anonymous.status, 401);
    assert.deepEqual(JSON.parse(anonymous.text), {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Unauthorized",
      reason: "Unauthorized",
      code: 401,
    });
    assert.deepEqual(await httpsGet(`${f.server.url}/healthz`, f.server.caCert), { status: 200, text: "ok" });
    const unknown = await as(kubeconfigFor("unknown", { token: "nope" }), "get", "pods");
    assert.match(
      unknown.stderr,
      /\nerror: You must be logged in to the server \(the server has asked for the client to provide credentials\)\n$/,
    );
  });

  it("refuses a user without a binding with kube-apiserver's 403, and allows it after a RoleBinding", async () => {
    const alice = kubeconfigFor("alice", { token: "alice-token" });
    const refused = await as(alice, "get", "pods");
    assert.equal(
      refused.stderr.trim(),
      'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    assert.equal((await as(alice, "auth", "can-i", "list", "pods")).stdout.trim(), "no");
    await f.run(kubectl(), ["create", "rolebinding", "alice-view", "--clusterrole=view", "--user=alice"]);
    assert.equal((await as(alice, "get", "pods")).code, 0);
    assert.equal((await as(alice, "auth", "can-i", "list", "pods")).stdout.trim(), "yes");
    assert.equal((await as(alice, "auth", "can-i", "list", "pods", "-n", "kube-system")).stdout.trim(), "no");
    const denied = await as(alice, "delete", "pod", "x");
    assert.match(
      denied.stderr,
      /pods "x" is forbidden: User "alice" cannot delete resource "pods" in API group ""/,
    );
    const whoami = await as(alice, "auth", "whoami", "-o", "json");
    assert.deepEqual(JSON.parse(whoami.stdout).status.userInfo.groups, ["dev", "qa", "system:authenticated"]);
  });

  it("answers kubectl auth can-i as an impersonated user and as a service account with a token", async () => {
    assert.equal(
      (await f.run(kubectl(), ["auth", "can-i", "list", "pods", "--as=alice"])).stdout.trim(),
      "yes",
    );
    assert.equal(
      (await f.run(kubectl(), ["auth", "can-i", "create", "pods", "--as=alice"])).stdout.trim(),
      "no",
    );
    await f.run(kubectl(), ["create", "serviceaccount", "reader"]);
    const sa = "system:serviceaccount:default:reader";
    assert.equal(
      (await f.run(kubectl(), ["auth", "can-i", "list", "pods", `--as=${sa}`])).stdout.trim(),
      "no",
    );
    await f.run(kubectl(), ["create", "role", "pod-reader", "--verb=get,list", "--resource=pods,pods/log"]);
    await f.run(kubectl(), [
      "create",
      "rolebinding",
      "reader",
      "--role=pod-reader",
      "--serviceaccount=default:reader",
    ]);
    const token = (await f.run(kubectl(), ["create", "token", "reader"])).stdout.trim();
    const reader = kubeconfigFor("reader", { token });
    assert.equal((await as(reader, "auth", "can-i", "list", "pods")).stdout.trim(), "yes");
    assert.equal(
      (await as(reader, "auth", "can-i", "get", "pods", "--subresource=log")).stdout.trim(),
      "yes",
    );
    assert.equal((await as(reader, "auth", "can-i", "list", "secrets")).stdout.trim(), "no");
    const whoami = JSON.parse((await as(reader, "auth", "whoami", "-o", "json")).stdout);
    assert.equal(whoami.status.userInfo.username, sa);
  });

  it("authenticates a kubeconfig whose user is an exec credential plugin", async () => {
    const plugin = f.file(
      "credential-plugin.sh",
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"alice-token"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    const exec = kubeconfigFor("exec", {
      exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
    });
    const whoami = await as(exec, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}");
    assert.equal(whoami.stdout, "alice", whoami.stderr);
    // Our client (services/kube, over client-node's configuration) with the same kubeconfig.
    const client = new HttpsKubeClient(loadClusterConnection({ kubeconfig: exec, env: {} }), {
      fieldManager: "auth-e2e",
    });
    await client.list({ group: "", version: "v1", resource: "pods" }, { namespace: "default" });
    await assert.rejects(
      client.list({ group: "", version: "v1", resource: "secrets" }, { namespace: "default" }),
      (err: Error) =>
        err.message.includes(
          'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default"',
        ),
    );
  });
});

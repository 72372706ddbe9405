import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { createLogger } from "../../services/kernel/log.ts";
import { startDevCluster } from "./dev-cluster.ts";
import { FakeLauncher, flush } from "./kubelet/fake-launcher.ts";
import { DEPLOYMENTS } from "./objects/refs.ts";

/** kubectl auth whoami: a SelfSubjectReview with a bearer token. */
function fetchAs(
  url: string,
  ca: string,
  token: string,
): Promise<{ status: { userInfo: { username: string } } }> {
  const body = JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
  return new Promise((resolve, reject) => {
    request(
      `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      {
        method: "POST",
        ca,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => resolve(JSON.parse(text)));
      },
    )
      .on("error", reject)
      .end(body);
  });
}

describe("dev-cluster", () => {
  it("schedules, runs and controls pods on the in-process API, and tells containers where the API is and who they are", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-dev-cluster-"));
    const fake = new FakeLauncher();
    const kubeconfigPath = path.join(dir, "kubeconfig");
    const cluster = await startDevCluster(
      { kubeconfigPath, node: { rootDir: path.join(dir, "kubelet"), podCidr: "127.8.0.0/16" } },
      { log: createLogger("dev-cluster-spec", "silent"), launcher: fake.launcher },
    );
    try {
      cluster.server.api.create(DEPLOYMENTS, "default", {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "app" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "app" } },
          template: {
            metadata: { labels: { app: "app" } },
            spec: { containers: [{ name: "c", image: "i", command: ["node", "app.js"] }] },
          },
        },
      });
      while (fake.running.length < 2) await flush();
      const env = fake.latest()?.spec.env ?? {};
      const url = new URL(cluster.url);
      assert.equal(env["KUBERNETES_SERVICE_HOST"], url.hostname);
      assert.equal(env["KUBERNETES_SERVICE_PORT"], url.port);
      // The pod's kubeconfig authenticates as its service account with the mounted token.
      const kubeconfig = parse(readFileSync(env["KUBECONFIG"] ?? "", "utf8"));
      assert.equal(kubeconfig.clusters[0].cluster.server, cluster.url);
      assert.equal(kubeconfig.contexts[0].context.namespace, "default");
      const tokenFile: string = kubeconfig.users[0].user.tokenFile;
      assert.equal(readFileSync(path.join(path.dirname(tokenFile), "ca.crt"), "utf8"), cluster.server.caCert);
      const reply = await fetchAs(cluster.url, cluster.server.caCert, readFileSync(tokenFile, "utf8"));
      assert.equal(reply.status.userInfo.username, "system:serviceaccount:default:default");
    } finally {
      await cluster.close({ graceSeconds: 0 });
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(fake.running, []);
  });
});

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../services/kernel/log.ts";
import { startDevCluster } from "./dev-cluster.ts";
import { FakeLauncher, flush } from "./kubelet/fake-launcher.ts";
import { DEPLOYMENTS } from "./objects/refs.ts";

describe("dev-cluster", () => {
  it("schedules, runs and controls pods on the in-process API, and tells containers where the API is", async () => {
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
      assert.equal(env["KUBECONFIG"], kubeconfigPath);
      assert.equal(env["KUBERNETES_SERVICE_HOST"], url.hostname);
      assert.equal(env["KUBERNETES_SERVICE_PORT"], url.port);
    } finally {
      await cluster.close({ graceSeconds: 0 });
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(fake.running, []);
  });
});

import assert from "node:assert/strict";
import { bootstrapCluster } from "./bootstrap.ts";
import { testCluster } from "./cluster/test-cluster.ts";

describe("bootstrap", () => {
  it("creates the system namespaces and the kubernetes service once", () => {
    const { api, store } = testCluster();
    const revision = store.revision;
    bootstrapCluster(api);
    assert.equal(store.revision, revision, "idempotent");
    assert.deepEqual(
      store.list("namespaces").map((n) => n.metadata.name),
      ["default", "kube-node-lease", "kube-public", "kube-system"],
    );
    assert.equal(
      (store.get("services", "default", "kubernetes")?.["spec"] as { clusterIP?: string } | undefined)
        ?.clusterIP,
      "10.96.0.1",
    );
  });
});

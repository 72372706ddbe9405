import assert from "node:assert/strict";
import { createLogger } from "../../../services/kernel/log.ts";
import { discardEvents } from "../../../services/kube/event-recorder.ts";
import { testCluster } from "../apiserver/cluster/test-cluster.ts";
import { CONFIGMAPS, NAMESPACES } from "../objects/refs.ts";
import { startControllers } from "./controller-manager.ts";

describe("root-ca-publisher", () => {
  it("puts kube-root-ca.crt with the cluster CA in every namespace, and puts it back when edited or deleted", async () => {
    const cluster = testCluster({ controllers: true });
    const { api } = cluster;
    const manager = startControllers(api, {
      clock: cluster.clock,
      log: createLogger("root-ca-spec", "silent"),
      events: discardEvents,
      rootCaCert: "PEM",
    });
    const settle = async () => {
      for (let i = 0; i < 3; i++) {
        await manager.idle();
        await cluster.settle();
      }
    };
    try {
      api.create(NAMESPACES, "", { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } });
      await settle();
      const data = () => api.get(CONFIGMAPS, "team", "kube-root-ca.crt")["data"];
      assert.deepEqual(data(), { "ca.crt": "PEM" });
      assert.deepEqual(api.get(CONFIGMAPS, "kube-system", "kube-root-ca.crt")["data"], { "ca.crt": "PEM" });
      const map = api.get(CONFIGMAPS, "team", "kube-root-ca.crt");
      api.update(CONFIGMAPS, "team", "kube-root-ca.crt", { ...map, data: { "ca.crt": "other" } });
      await settle();
      assert.deepEqual(data(), { "ca.crt": "PEM" });
      api.delete(CONFIGMAPS, "team", "kube-root-ca.crt");
      await settle();
      assert.deepEqual(data(), { "ca.crt": "PEM" });
    } finally {
      manager.stop();
    }
  });
});

import assert from "node:assert/strict";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import type { Pod } from "../objects/pod-types.ts";
import { PODS, REPLICASETS } from "../objects/refs.ts";
import type { ReplicaSet } from "../objects/workload-types.ts";
import { deletionOrder } from "./replicaset-controller.ts";
import { controllerCluster } from "./test-controllers.ts";

const replicaSet = (name: string, replicas: number, minReadySeconds = 0): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name },
  spec: {
    replicas,
    minReadySeconds,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "c", image: "i", command: ["x"] }] },
    },
  },
});

describe("replicaset-controller", () => {
  it("creates owned pods from the template and reports ready and available replicas", async () => {
    const { api, settle, pods, runPods } = controllerCluster();
    api.create(REPLICASETS, "default", replicaSet("web", 3));
    await settle();
    const created = pods();
    assert.equal(created.length, 3);
    assert.ok(
      created.every((p) => p.metadata.name?.startsWith("web-") && p.metadata.labels?.["app"] === "web"),
    );
    assert.ok(created.every((p) => p.metadata.ownerReferences?.[0]?.kind === "ReplicaSet"));
    runPods();
    await settle();
    const rs = api.get(REPLICASETS, "default", "web") as ReplicaSet;
    assert.deepEqual(rs.status, {
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      observedGeneration: 1,
    });
  });

  it("scales down and replaces pods that were deleted", async () => {
    const { api, settle, pods, runPods } = controllerCluster();
    api.create(REPLICASETS, "default", replicaSet("web", 3));
    await settle();
    runPods();
    await settle();
    const victim = pods()[0]?.metadata.name ?? "";
    api.delete(PODS, "default", victim);
    await settle();
    assert.equal(pods().length, 3);
    assert.ok(!pods().some((p) => p.metadata.name === victim));
    const rs = api.get(REPLICASETS, "default", "web");
    api.update(REPLICASETS, "default", "web", { ...rs, spec: { ...(rs["spec"] as object), replicas: 1 } });
    await settle();
    assert.equal(pods().length, 1);
  });

  it("counts a ready pod as available only after minReadySeconds", async () => {
    const { api, clock, settle, runPods } = controllerCluster();
    api.create(REPLICASETS, "default", replicaSet("slow", 1, 10));
    await settle();
    runPods();
    await settle();
    assert.equal((api.get(REPLICASETS, "default", "slow") as ReplicaSet).status?.availableReplicas, 0);
    await clock.advance(10_000);
    await settle();
    assert.equal((api.get(REPLICASETS, "default", "slow") as ReplicaSet).status?.availableReplicas, 1);
  });

  it("deletes unscheduled, then not-ready, then newer pods first", () => {
    const pod = (name: string, nodeName: string | undefined, ready: boolean, created: string): Pod => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, creationTimestamp: created },
      spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
      status: { phase: "Running", conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
    });
    const order = deletionOrder([
      pod("old-ready", "n", true, "2025-01-01T00:00:00Z"),
      pod("new-ready", "n", true, "2025-01-02T00:00:00Z"),
      pod("not-ready", "n", false, "2025-01-01T00:00:00Z"),
      pod("unscheduled", undefined, false, "2025-01-01T00:00:00Z"),
    ]).map((p) => p.metadata.name);
    assert.deepEqual(order, ["unscheduled", "not-ready", "new-ready", "old-ready"]);
  });
});

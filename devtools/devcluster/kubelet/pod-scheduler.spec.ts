import assert from "node:assert/strict";
import { createLogger } from "../../../services/kernel/log.ts";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { testCluster } from "../apiserver/cluster/test-cluster.ts";
import type { Pod } from "../objects/pod-types.ts";
import { NODES, PODS } from "../objects/refs.ts";
import { flush } from "./fake-launcher.ts";
import { parseKubeletConfig } from "./kubelet-config.ts";
import { nodeObject } from "./node-object.ts";
import { PodScheduler } from "./pod-scheduler.ts";

const pod = (name: string, cpu: string, extra: Partial<Pod["spec"]> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "c", image: "i", resources: { requests: { cpu } } }], ...extra },
});

function setup(nodes: { name: string; cpu: string; labels?: Record<string, string> }[]) {
  const cluster = testCluster({ controllers: true });
  for (const n of nodes)
    cluster.api.create(
      NODES,
      "",
      nodeObject(
        parseKubeletConfig({ nodeName: n.name, capacity: { cpu: n.cpu }, labels: n.labels ?? {} }),
        0,
      ),
    );
  const scheduler = new PodScheduler(cluster.api, {
    clock: cluster.clock,
    log: createLogger("scheduler-spec", "silent"),
  });
  scheduler.start();
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await flush();
      await scheduler.idle();
      await cluster.settle();
    }
  };
  const get = (name: string) => cluster.api.get(PODS, "default", name) as Pod;
  return { ...cluster, scheduler, settle, get };
}

describe("pod-scheduler", () => {
  it("binds pending pods to the node with room, spreading by free cpu", async () => {
    const { api, settle, get } = setup([
      { name: "a", cpu: "4" },
      { name: "b", cpu: "4" },
    ]);
    api.create(PODS, "default", pod("p1", "3"));
    await settle();
    api.create(PODS, "default", pod("p2", "2"));
    await settle();
    const first = get("p1").spec.nodeName;
    assert.ok(first === "a" || first === "b");
    assert.equal(get("p2").spec.nodeName, first === "a" ? "b" : "a");
    assert.equal(get("p1").status?.conditions?.find((c) => c.type === "PodScheduled")?.status, "True");
  });

  it("marks a pod that fits nowhere Unschedulable, and binds it once room frees up", async () => {
    const { api, settle, get } = setup([{ name: "a", cpu: "2" }]);
    api.create(PODS, "default", pod("big", "1500m"));
    api.create(PODS, "default", pod("waiting", "1"));
    await settle();
    const condition = get("waiting").status?.conditions?.find((c) => c.type === "PodScheduled");
    assert.equal(get("waiting").spec.nodeName, undefined);
    assert.equal(condition?.status, "False");
    assert.equal(condition?.reason, "Unschedulable");
    assert.equal(condition?.message, "0/1 nodes are available: 1 Insufficient cpu.");
    api.delete(PODS, "default", "big");
    await settle();
    assert.equal(get("waiting").spec.nodeName, "a");
  });

  it("honours nodeSelector and leaves pods of other schedulers alone", async () => {
    const { api, settle, get } = setup([
      { name: "cpu-node", cpu: "8" },
      { name: "gpu-node", cpu: "1", labels: { accelerator: "h100" } },
    ]);
    api.create(PODS, "default", pod("picky", "100m", { nodeSelector: { accelerator: "h100" } }));
    api.create(PODS, "default", pod("custom", "100m", { schedulerName: "my-scheduler" }));
    await settle();
    assert.equal(get("picky").spec.nodeName, "gpu-node");
    assert.equal(get("custom").spec.nodeName, undefined);
  });
});

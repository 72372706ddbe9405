import assert from "node:assert/strict";
import type { Container, Pod } from "../objects/pod-types.ts";
import { type NodeView, pickNode, podRequests, unfitReasons, unschedulableMessage } from "./pod-fit.ts";

const container = (requests: Record<string, string>, limits: Record<string, string> = {}): Container => ({
  name: "c",
  image: "i",
  resources: { requests, limits },
});
const pod = (containers: Container[], extra: Partial<Pod["spec"]> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p" },
  spec: { containers, ...extra },
});
const node = (name: string, allocatable: Record<string, number>, labels = {}): NodeView => ({
  name,
  labels,
  allocatable,
  ready: true,
  unschedulable: false,
});

describe("pod-fit", () => {
  it("sums container requests, falls back to limits and takes init containers' maximum", () => {
    const spec = pod([container({ cpu: "500m" }), container({}, { memory: "1Gi", "nvidia.com/gpu": "1" })], {
      initContainers: [container({ cpu: "2" })],
    }).spec;
    assert.deepEqual(podRequests(spec), { cpu: 2, memory: 1024 ** 3, "nvidia.com/gpu": 1, pods: 1 });
  });

  it("explains what does not fit", () => {
    const big = pod([container({ cpu: "3", "nvidia.com/gpu": "2" })]);
    const n = node("a", { cpu: 4, "nvidia.com/gpu": 1, pods: 110 });
    assert.deepEqual(unfitReasons(big, n, { cpu: 2 }), ["Insufficient cpu", "Insufficient nvidia.com/gpu"]);
    assert.deepEqual(unfitReasons(big, n, {}), ["Insufficient nvidia.com/gpu"]);
    assert.deepEqual(unfitReasons(pod([container({})]), node("b", { pods: 1 }), { pods: 1 }), [
      "Too many pods",
    ]);
    const picky = pod([container({})], { nodeSelector: { gpu: "h100" } });
    assert.deepEqual(unfitReasons(picky, node("c", { pods: 9 }), {}), [
      "node(s) didn't match Pod's node affinity/selector",
    ]);
  });

  it("picks the node with the most free cpu, or reports every node's reasons", () => {
    const small = pod([container({ cpu: "1" })]);
    const nodes = [node("a", { cpu: 4, pods: 10 }), node("b", { cpu: 4, pods: 10 })];
    const picked = pickNode(small, nodes, (name) => (name === "a" ? { cpu: 3 } : { cpu: 1 }));
    assert.ok("node" in picked && picked.node.name === "b");
    const huge = pod([container({ cpu: "8" })]);
    const none = pickNode(huge, nodes, () => ({}));
    assert.ok("reasons" in none);
    assert.equal(
      unschedulableMessage(nodes.length, none.reasons),
      "0/2 nodes are available: 2 Insufficient cpu.",
    );
  });
});

import assert from "node:assert/strict";
import { parseKubeletConfig } from "./kubelet-config.ts";
import { nodeObject, nodeView } from "./node-object.ts";

describe("node-object", () => {
  it("declares the configured capacity as allocatable, with a Ready condition and labels", () => {
    const config = parseKubeletConfig({
      nodeName: "n1",
      capacity: { cpu: "8", memory: "16Gi", "nvidia.com/gpu": 2 },
      labels: { gpu: "h100" },
    });
    const node = nodeObject(config, Date.UTC(2025, 0, 1));
    const status = node["status"] as { capacity: object; allocatable: object };
    assert.deepEqual(status.capacity, { cpu: "8", memory: "16Gi", "nvidia.com/gpu": "2", pods: "110" });
    assert.deepEqual(status.allocatable, status.capacity);
    assert.equal(node.metadata.labels?.["kubernetes.io/hostname"], "n1");
    assert.equal(node.metadata.labels?.["gpu"], "h100");
    const view = nodeView(node);
    assert.equal(view.ready, true);
    assert.deepEqual(view.allocatable, { cpu: 8, memory: 16 * 1024 ** 3, "nvidia.com/gpu": 2, pods: 110 });
  });

  it("defaults cpu and memory to this machine's", () => {
    const view = nodeView(nodeObject(parseKubeletConfig({}), 0));
    assert.ok((view.allocatable["cpu"] ?? 0) >= 1);
    assert.ok((view.allocatable["memory"] ?? 0) > 0);
  });
});

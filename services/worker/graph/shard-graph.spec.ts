// How a shard is cut into graphs, what does not fit a model, and that the whole model's graph (a single
// process, a group of one) is still, byte for byte, the graph the separate whole-model builder wrote
// before the two runtimes merged: the same ops in the same order, the same weights.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import path from "node:path";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { REFERENCE_DIR, REFERENCE_MODELS } from "../testdata/reference.ts";
import { msGqaAttention } from "./attention-ms-gqa.ts";
import { onnxOpsAttention } from "./attention-onnx-ops.ts";
import {
  buildSegmentGraph,
  planSegments,
  segmentAttentionLayers,
  shardProblem,
  wholeModel,
} from "./shard-graph.ts";

/**
 * sha256 of the whole-model graphs, by model and backend: those graph/decoder-graph.ts built (commit
 * 65c43bc), changed since only by the head-major gather of the cached K/V (issue 18), whose outputs the
 * reference specs check (runtime/model-runner.spec.ts and the other *-reference specs).
 */
const WHOLE_MODEL_GRAPHS: Record<(typeof REFERENCE_MODELS)[number], Record<string, string>> = {
  "tiny-llama": {
    "onnx-ops": "64e5e924d986e68f15eb48ad8d6cc32193ece5141637162a552a430f08207ad9",
    "ms-gqa": "e9f8c5875765580b9b50ff3b980f79da0562e1fc3d82e34211793f9612d2ca30",
  },
  "tiny-mistral": {
    "onnx-ops": "370cb731335e314ea723f57a9230091ab8218875eea1ee2c4dd46ad03175662d",
    "ms-gqa": "70f645023bf4499f7b7c6c3c2afd7d5e85c831057b8043f477b2c94b4265804a",
  },
  "tiny-qwen2": {
    "onnx-ops": "c352eeadabd2b78de616ad64317e0fd7fbe551d9da5fd3b33b4297a607cc57bc",
    "ms-gqa": "11856bb935642b50d6e41e90f1b43fc2e93899d5e450d5fec838ca9d65a64631",
  },
  "tiny-mixtral": {
    "onnx-ops": "4fbeee90b622ed11a5a29d3c6aa7b9ae8e390833f08b793679bc836f73c5cf7d",
    "ms-gqa": "1b1c706e759277532d4eb8726eb8674c35369325e2da2a82a582f9da46d5aa31",
  },
};

describe("shard graph plan", () => {
  it("is one graph per stage without tensor parallelism: embed on the first, LM head on the last", () => {
    const tensor = { rank: 0, size: 1 };
    assert.deepEqual(planSegments({ layers: { start: 0, end: 2 }, tensor }, 4), [
      { entry: "tokens", layers: [0, 1], exit: "hidden" },
    ]);
    assert.deepEqual(planSegments({ layers: { start: 2, end: 4 }, tensor }, 4), [
      { entry: "hidden", layers: [2, 3], exit: "logits" },
    ]);
  });

  it("cuts a tensor shard after every attention and MLP, where the all-reduces go", () => {
    const segments = planSegments({ layers: { start: 1, end: 3 }, tensor: { rank: 1, size: 2 } }, 3);
    assert.deepEqual(
      segments.map((s) => [s.entry, s.half?.part ?? "-", s.half?.layer ?? "-", s.exit]),
      [
        ["hidden", "attention", 1, "partial"],
        ["sum", "mlp", 1, "partial"],
        ["sum", "attention", 2, "partial"],
        ["sum", "mlp", 2, "partial"],
        ["sum", "-", "-", "logits"],
      ],
    );
    assert.deepEqual(segments.map(segmentAttentionLayers), [[1], [], [2], [], []]);
  });

  it("names what does not fit the model", () => {
    const c = describeCheckpoint(path.join(REFERENCE_DIR, "tiny-llama")).config; // 2 layers, 6 heads, 2 KV heads
    assert.equal(shardProblem(c, { layers: { start: 0, end: 2 }, tensor: { rank: 1, size: 2 } }), undefined);
    assert.match(
      shardProblem(c, { layers: { start: 1, end: 3 }, tensor: { rank: 0, size: 1 } })!,
      /layers 1..2/,
    );
    assert.match(
      shardProblem(c, { layers: { start: 0, end: 2 }, tensor: { rank: 0, size: 4 } })!,
      /does not divide/,
    );
    assert.match(
      shardProblem(c, { layers: { start: 0, end: 2 }, tensor: { rank: 2, size: 2 } })!,
      /rank 2 of 2/,
    );
  });

  for (const model of REFERENCE_MODELS)
    it(`builds ${model}'s whole model as one graph, byte-identical to the single-process graph before`, () => {
      const dir = path.join(REFERENCE_DIR, model);
      const { config, architecture } = describeCheckpoint(dir);
      const spec = wholeModel(config.numLayers);
      const segments = planSegments(spec, config.numLayers);
      assert.deepEqual(segments, [
        { entry: "tokens", layers: Array.from({ length: config.numLayers }, (_, i) => i), exit: "logits" },
      ]);
      const parts = { config, names: architecture.weightNames(config), weights: WeightStore.open(dir), spec };
      for (const attention of [onnxOpsAttention, msGqaAttention]) {
        const graph = buildSegmentGraph({ ...parts, attention }, segments[0]!);
        const sha = createHash("sha256").update(graph).digest("hex");
        assert.equal(sha, WHOLE_MODEL_GRAPHS[model][attention.name], attention.name);
      }
    });
});

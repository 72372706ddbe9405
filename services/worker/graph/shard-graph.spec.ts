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

/** sha256 of the whole-model graphs graph/decoder-graph.ts built (commit 65c43bc), by model and backend. */
const WHOLE_MODEL_GRAPHS: Record<(typeof REFERENCE_MODELS)[number], Record<string, string>> = {
  "tiny-llama": {
    "onnx-ops": "c83d1fc26750ea0af0d6eb8397f531f25f3989476e1a8c6114c6ce0032f7504b",
    "ms-gqa": "7870477c7377bc5bbbf5fdc9e0addd73ded150cdece1644f2a72be406a5903be",
  },
  "tiny-mistral": {
    "onnx-ops": "98eef822e1dfd8330921358074a9ac121ef4565e5f05268c2bfc11fbe795ab24",
    "ms-gqa": "41043b049b028d6bb41ec921946c1af2731bcf0d01c2d40a9580b4e7aa8677c0",
  },
  "tiny-qwen2": {
    "onnx-ops": "9dfbbf8ea7414c70cfa6208b382d06f32d4d2d411ee63d8e624a5d65b1ba1ede",
    "ms-gqa": "0892215242cf73dcd9361b8b3e90b981e2faecfa276f2f77f0e18817208e2650",
  },
  "tiny-mixtral": {
    "onnx-ops": "57f163cc8958f7ba2de043ed9fe04393edfb20d724648dd273af20532e4f35e3",
    "ms-gqa": "3d070c7a37078522134748fd772e59c4bcb43629cc1ed7629fec793a8a04e5a2",
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

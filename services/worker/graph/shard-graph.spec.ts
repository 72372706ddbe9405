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
 * 65c43bc), changed since only by the head-major gather of the cached K/V and its two row halves (issue 18) and by RMSNorm
 * and RoPE as onnxruntime's fused nodes (SimplifiedLayerNormalization, RotaryEmbedding), whose outputs
 * the reference specs check (runtime/model-runner.spec.ts and the other *-reference specs).
 */
const WHOLE_MODEL_GRAPHS: Record<(typeof REFERENCE_MODELS)[number], Record<string, string>> = {
  "tiny-llama": {
    "onnx-ops": "1a076cc2ded74c1908cc8653699030f57e93851e56e430846f7777d7800c5ea1",
    "ms-gqa": "362f76adcee6ed5a41a738692efe530fa5f2ec4daeee59c5cdb213f25dc2e2b8",
  },
  "tiny-mistral": {
    "onnx-ops": "cbcae0a4275aa7b964150ea6ffc39765da16dc0a3d86505cd17129cb7069d516",
    "ms-gqa": "e33c3ed90d082f829ed4712dc0add40017d31833ec33d653cbeb6a6c19a09f8b",
  },
  "tiny-qwen2": {
    "onnx-ops": "48eb2ffd317599bb04da7018dec575a29917572e6188e9755ed75f75982fb34d",
    "ms-gqa": "46b68255ac9bdb1c5768ddc7dad0bcb43aebf469bef867c34039766e82bf1b1c",
  },
  "tiny-mixtral": {
    "onnx-ops": "b6cdc42a1a0e38d80f5498cf8803288bfb977847cc66e0025e997913ec94a3d9",
    "ms-gqa": "975f2607e70df6966202cb62ad4222e67bccb6d38d4c4e2cca96d8185d5f3771",
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

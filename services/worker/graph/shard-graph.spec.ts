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
 * 65c43bc), changed since only by the head-major gather of the cached K/V (issue 18) and by RMSNorm
 * and RoPE as onnxruntime's fused nodes (SimplifiedLayerNormalization, RotaryEmbedding), whose outputs
 * the reference specs check (runtime/model-runner.spec.ts and the other *-reference specs).
 */
const WHOLE_MODEL_GRAPHS: Record<(typeof REFERENCE_MODELS)[number], Record<string, string>> = {
  "tiny-llama": {
    "onnx-ops": "5fae8602ac003e2634718842d85cec8dc945539954951f887238d75bf36f7b22",
    "ms-gqa": "ab03d76f73c920f4794a496fc14c5b7e9a4b52db20dbed27ad086faf8b3cf41a",
  },
  "tiny-mistral": {
    "onnx-ops": "5d936a63e613aee4497e64c4cbdd48954190b69652b7f987306ae0b829764908",
    "ms-gqa": "2dd20697507bb2bf89629fab841831ceb8a2d4dd69ae30e769afb1113581e06a",
  },
  "tiny-qwen2": {
    "onnx-ops": "46b328e1d87d26ac0dd3d465c23b91e78f263dc26f52692c9ee770f8ff943f18",
    "ms-gqa": "12da1e829601061bc633fddc0dadb46c6188c0fb9db4957dee1b852bd769e90d",
  },
  "tiny-mixtral": {
    "onnx-ops": "8ebd17ab8697f53c6a77733468a690b395d8459edb6607df3ba2f8b05e7b7344",
    "ms-gqa": "5472a9e2198cfec2a7abe7473383445f34365b3fbdb60ea3d9de9c0eb1e393b6",
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

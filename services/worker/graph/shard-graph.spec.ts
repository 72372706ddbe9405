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
    "onnx-ops": "744b58407274dfbccc5ac0419417b0818068a3fbddb93ad2d03015cc9c3efd7b",
    "ms-gqa": "9ca2e11e36fab0ee3e26ec2d3937e503f11f1ccaa8b5632002d2a6198a0f2dec",
  },
  "tiny-mistral": {
    "onnx-ops": "7e62dcab09015a30628011fbbcdd032062a4776702ac1cfa6f1e05c4b05401a7",
    "ms-gqa": "71246ce9bc81caa82a98cbdc2a568517c5feb1dbe601260a994e2ba4d9733c98",
  },
  "tiny-qwen2": {
    "onnx-ops": "956822a77ed8a05ac97a6af83a9e25aec47110bee7c7d22f464a0a6d164cd2dc",
    "ms-gqa": "f63f127bcd31c24ffc3bb32e25bddceb56e8e252adceb1daa2fef0e8b71af4a1",
  },
  "tiny-mixtral": {
    "onnx-ops": "0a5ba6182f1ddae750744471c424ecdc159b58760167c0e4b5e0f78be8b14fae",
    "ms-gqa": "d7e3b3080e90e142e5aedfab9fafb84cafa58884b9d313b8b53c61b848e809b4",
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

import assert from "node:assert/strict";
import path from "node:path";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { REFERENCE_DIR } from "../testdata/reference.ts";
import { planSegments, segmentAttentionLayers, shardProblem } from "./shard-graph.ts";

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
});

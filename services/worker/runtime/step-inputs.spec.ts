// Dynamic rope's per-token tables: each token of a request is rotated for max(prompt length,
// position + 1), the lengths of the forwards transformers' generate runs, whatever else shares the
// step; every other rope needs no per-token input.
import assert from "node:assert/strict";
import type { RopeScaling } from "../arch/rope.ts";
import { ropeInverseFrequencies } from "../arch/rope.ts";
import { buildStepInputs, logitRowCount, type StepModel } from "./step-inputs.ts";

const model = (ropeScaling: RopeScaling): StepModel => ({
  slidingWindow: undefined,
  headDim: 8,
  ropeTheta: 10000,
  ropeScaling,
});
const dynamic = model({ type: "dynamic", factor: 2, maxPositions: 32 });

/** The table row of each token. */
const rows = (t: Float32Array) =>
  Array.from({ length: t.length / 4 }, (_, i) => [...t.subarray(i * 4, i * 4 + 4)]);

describe("buildStepInputs rope tables", () => {
  it("gives a chunk of a long prompt the prompt's table and a decode token its own length's", () => {
    const inputs = buildStepInputs(
      [
        { numPast: 16, numNew: 3, blockTable: [0, 1, 2], needsLogits: false, promptLength: 40 },
        { numPast: 50, numNew: 1, blockTable: [3, 4, 5, 6], needsLogits: true, promptLength: 40 },
        { numPast: 4, numNew: 2, blockTable: [7], needsLogits: true, promptLength: 6 },
      ],
      16,
      dynamic,
    );
    const table = (len: number) => [...ropeInverseFrequencies(dynamic, len)];
    assert.deepEqual(rows(inputs.ropeInverseFrequencies!), [
      table(40),
      table(40),
      table(40),
      table(51),
      table(6),
      table(6),
    ]);
    assert.deepEqual(table(6), table(32), "up to max_position_embeddings the base table");
    assert.notDeepEqual(table(40), table(51));
  });

  it("takes a step without a prompt length as one whole forward", () => {
    const inputs = buildStepInputs(
      [{ numPast: 30, numNew: 5, blockTable: [0, 1, 2], needsLogits: true }],
      16,
      dynamic,
    );
    assert.deepEqual(
      rows(inputs.ropeInverseFrequencies!),
      Array(5).fill([...ropeInverseFrequencies(dynamic, 35)]),
    );
  });

  it("has no per-token tables for rope that does not depend on the length", () => {
    const seqs = [{ numPast: 0, numNew: 40, blockTable: [0, 1, 2], needsLogits: true, promptLength: 40 }];
    const yarn = model({
      type: "yarn",
      factor: 4,
      originalMaxPositions: 32,
      betaFast: 32,
      betaSlow: 1,
      truncate: true,
      attentionFactor: 1.1,
    });
    assert.equal(buildStepInputs(seqs, 16, yarn).ropeInverseFrequencies, undefined);
    assert.equal(buildStepInputs(seqs, 16).ropeInverseFrequencies, undefined);
  });
});

// One mechanism for several logits rows per sequence: prompt logprobs want every new token's row, a
// speculative row its last k + 1; the rows come back in batch order, each sequence's in position order.
describe("buildStepInputs logits rows", () => {
  const none = model({ type: "default" });
  it("takes every new token's row with promptLogits and the last numLogits with a speculative row", () => {
    const seqs = [
      { numPast: 0, numNew: 3, blockTable: [0], needsLogits: false, promptLogits: true },
      { numPast: 5, numNew: 4, blockTable: [1], needsLogits: true, numLogits: 3 },
      { numPast: 2, numNew: 2, blockTable: [2], needsLogits: true },
      { numPast: 3, numNew: 2, blockTable: [3], needsLogits: true, promptLogits: true },
      { numPast: 0, numNew: 2, blockTable: [4], needsLogits: false },
    ];
    const inputs = buildStepInputs(seqs, 16, none);
    // Offsets of the sequences' tokens: 0, 3, 7, 9, 11.
    assert.deepEqual([...inputs.logitsIndex].map(Number), [0, 1, 2, 4, 5, 6, 8, 9, 10]);
    assert.deepEqual(
      seqs.map((s) => logitRowCount(s)),
      [3, 3, 1, 2, 0],
    );
  });

  it("refuses a row asking both prompt logits and speculative rows", () => {
    assert.throws(
      () => logitRowCount({ numNew: 4, needsLogits: true, promptLogits: true, numLogits: 4 }),
      /both prompt logits and speculative rows/,
    );
  });
});

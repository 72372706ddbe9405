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

// The shared-prefix backend's inputs: decode rows whose tables start with the same blocks read them
// once (their group's), and the decode group's past keeps only each row's own tokens after them.
describe("buildStepInputs shared prompt heads", () => {
  const decode = (numPast: number, blockTable: number[]) => ({
    numPast,
    numNew: 1,
    blockTable,
    needsLogits: true,
  });
  const ints = (a: BigInt64Array) => [...a].map(Number);

  it("groups decode rows by their common full leading blocks and keeps each row's tail", () => {
    const seqs = [
      decode(10, [0, 1, 2]), // head 0, 1 + own 2 (2 tokens)
      { numPast: 4, numNew: 3, blockTable: [0, 9], needsLogits: true }, // a prefill chunk: never grouped
      decode(9, [0, 1, 3]), // head 0, 1 + own 3 (1 token)
      decode(12, [5, 6, 7, 8]), // head 5, 6, 7 + own 8
      decode(6, [5, 6]), // head 5 (its only full block) + 2 tokens of block 6
      decode(7, [4, 10]), // alone
    ];
    const inputs = buildStepInputs(seqs, 4, undefined, true);
    const shared = inputs.shared!;
    // Group of 0: rows 0, 1 of the decode group (blocks 0, 1: 8 tokens); group of 5: rows 2, 3, block 5
    // only (row 3 has one full block).
    assert.deepEqual([shared.groups, shared.members, shared.length], [2, 2, 8]);
    assert.deepEqual(ints(shared.index), [0, 1, 2, 3, 4, 5, 6, 7, 20, 21, 22, 23, 0, 0, 0, 0]);
    assert.deepEqual([...shared.bias], [...Array(12).fill(0), ...Array(4).fill(Number.NEGATIVE_INFINITY)]);
    assert.deepEqual(ints(shared.memberIndex), [0, 1, 2, 3]);
    assert.deepEqual(ints(shared.rowIndex), [0, 1, 2, 3, 4]);
    const d = inputs.groups.decode;
    assert.deepEqual(d.numPast, [2, 1, 8, 2, 7]);
    assert.equal(d.past, 8);
    // Row 2 (block 5 shared): its own tokens 4..11 are blocks 6 and 7.
    assert.deepEqual(ints(d.pastIndex.subarray(16, 24)), [24, 25, 26, 27, 28, 29, 30, 31]);
    assert.deepEqual(ints(d.pastIndex.subarray(0, 2)), [8, 9]);
    // The prefill group keeps its whole past.
    assert.deepEqual(inputs.groups.prefill.numPast, [4]);
  });

  it("shares nothing with a sliding window, or without the backend, or with no decode rows", () => {
    const seqs = [decode(10, [0, 1, 2]), decode(9, [0, 1, 3])];
    const windowed = buildStepInputs(seqs, 4, { ...model({ type: "default" }), slidingWindow: 8 }, true);
    assert.deepEqual(ints(windowed.shared!.rowIndex), [1, 1], "every row in none (groups * members)");
    assert.deepEqual(windowed.groups.decode.numPast, [10, 9]);
    assert.equal(buildStepInputs(seqs, 4).shared, undefined);
    const prefillOnly = buildStepInputs(
      [{ numPast: 0, numNew: 3, blockTable: [0], needsLogits: true }],
      4,
      undefined,
      true,
    );
    assert.deepEqual(ints(prefillOnly.shared!.rowIndex), [1], "the empty decode group's padding row");
  });
});

import assert from "node:assert/strict";
import { splitMicroBatches } from "./micro-batches.ts";

const seq = (numNew: number) => ({ numPast: 0, numNew, blockTable: [0], needsLogits: true });

describe("splitMicroBatches", () => {
  it("splits a decode batch into equal contiguous halves", () => {
    const parts = splitMicroBatches(
      Array.from({ length: 16 }, () => seq(1)),
      2,
    );
    assert.deepEqual(
      parts.map((p) => [p.seqs.length, p.tokenStart, p.tokenEnd]),
      [
        [8, 0, 8],
        [8, 8, 16],
      ],
    );
  });

  it("balances tokens, not sequences, and never leaves a micro-batch empty", () => {
    const parts = splitMicroBatches([seq(30), seq(1), seq(1), seq(1)], 2);
    assert.deepEqual(
      parts.map((p) => p.seqs.length),
      [1, 3],
    );
    const three = splitMicroBatches([seq(1), seq(1), seq(50)], 3);
    assert.deepEqual(
      three.map((p) => [p.tokenStart, p.tokenEnd]),
      [
        [0, 1],
        [1, 2],
        [2, 52],
      ],
    );
  });

  it("makes at most one micro-batch per sequence, and keeps every sequence in order", () => {
    const seqs = [seq(3), seq(4)];
    const parts = splitMicroBatches(seqs, 4);
    assert.equal(parts.length, 2);
    assert.deepEqual(
      parts.flatMap((p) => p.seqs),
      seqs,
    );
    assert.equal(splitMicroBatches(seqs, 1).length, 1);
  });
});

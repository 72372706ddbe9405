// Dynamic rope's per-token tables: each token of a request is rotated for max(prompt length,
// position + 1), the lengths of the forwards transformers' generate runs, whatever else shares the
// step; every other rope needs no per-token input.
import assert from "node:assert/strict";
import type { RopeScaling } from "../arch/rope.ts";
import { ropeInverseFrequencies } from "../arch/rope.ts";
import { buildStepInputs, type StepModel } from "./step-inputs.ts";

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

import assert from "node:assert/strict";
import { attentionBias } from "./attention-bias.ts";

const I = Number.NEGATIVE_INFINITY;

describe("attentionBias", () => {
  it("is causal over the new tokens and open to all past ones", () => {
    assert.deepEqual(Array.from(attentionBias(1, 2)), [0, 0, I, 0, 0, 0]);
  });

  it("hides keys older than the sliding window", () => {
    // query at position 3 with window 2 sees positions 2 and 3 only
    assert.deepEqual(Array.from(attentionBias(3, 1, 2)), [I, I, 0, 0]);
  });
});

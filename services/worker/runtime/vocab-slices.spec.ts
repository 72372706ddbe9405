import assert from "node:assert/strict";
import { joinVocabSlices } from "./vocab-slices.ts";

describe("joinVocabSlices", () => {
  it("interleaves the ranks' vocabulary slices into whole rows", () => {
    // vocab 5 over 2 ranks: ids 0..1 and 2..4; two rows.
    const joined = joinVocabSlices([Float32Array.of(0, 1, 10, 11), Float32Array.of(2, 3, 4, 12, 13, 14)], 5);
    assert.deepEqual([...joined], [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]);
  });

  it("returns a single slice as it is and rejects slices of the wrong size", () => {
    const one = Float32Array.of(1, 2, 3);
    assert.equal(joinVocabSlices([one], 3), one);
    assert.throws(() => joinVocabSlices([Float32Array.of(0, 1), Float32Array.of(2)], 4), /rank 1/);
  });
});

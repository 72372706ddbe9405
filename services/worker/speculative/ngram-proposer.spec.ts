import assert from "node:assert/strict";
import { lookup } from "./ngram-proposer.ts";

describe("n-gram lookup (vLLM's prompt lookup)", () => {
  it("proposes what followed the earlier occurrence of the suffix", () => {
    // suffix [1, 2] occurred at 0..1, followed by 3, 4, 5
    assert.deepEqual(lookup([1, 2, 3, 4, 5, 9, 1, 2], 1, 3, 3), [3, 4, 5]);
  });

  it("prefers the longest match, then the earliest of that length", () => {
    // [7, 1, 2] (length 3) occurs at 4..6; [1, 2] alone earlier at 0..1
    assert.deepEqual(lookup([1, 2, 8, 8, 7, 1, 2, 6, 6, 7, 1, 2], 1, 3, 2), [6, 6]);
    // two occurrences of [1, 2] of the same length: the earliest wins
    assert.deepEqual(lookup([1, 2, 3, 1, 2, 4, 1, 2], 2, 2, 1), [3]);
  });

  it("proposes nothing below prompt_lookup_min, and at most the tokens that follow", () => {
    assert.deepEqual(lookup([1, 2, 3, 4, 5, 2], 2, 3, 4), []);
    assert.deepEqual(lookup([1, 2, 3, 4, 5, 2], 1, 3, 4), [3, 4, 5, 2]);
    // the match may run into the suffix itself: a repeated token proposes itself
    assert.deepEqual(lookup([5, 5, 5], 1, 2, 4), [5]);
    assert.deepEqual(lookup([9], 1, 2, 4), []);
  });
});

import assert from "node:assert/strict";
import { candidate, pluginContext, request } from "../../testing/candidates.ts";
import { capacity, consistentHashScorer } from "./consistent-hash-scorer.ts";

describe("consistent-hash scorer (bounded loads)", () => {
  const scorer = consistentHashScorer.create({ epsilon: 0.25 }, pluginContext());

  it("computes capacity as ceil((1 + epsilon) * mean), counting the new request", () => {
    const four = ["a", "b", "c", "d"].map((n) => candidate(n, { inFlight: 15 }));
    assert.equal(capacity(four, 0.25), Math.ceil((1.25 * 61) / 4));
    assert.equal(capacity([candidate("a")], 0.25), 2);
  });

  it("scores the home 1 and the later endpoints less, in ring order", () => {
    const scores = scorer.score(request, [candidate("home"), candidate("next"), candidate("last")]);
    assert.deepEqual(scores, [1, 1 - 1 / 3, 1 - 2 / 3]);
  });

  it("passes over endpoints at capacity to the next one on the walk", () => {
    // total 8 in flight over 3: capacity ceil(1.25 * 9 / 3) = 4.
    const scores = scorer.score(request, [
      candidate("home", { inFlight: 4 }),
      candidate("next", { inFlight: 4 }),
      candidate("last", { inFlight: 0 }),
    ]);
    assert.deepEqual(scores, [0, 0, 1]);
  });

  it("rejects a non-positive epsilon", () => {
    assert.equal(consistentHashScorer.params.safeParse({ epsilon: 0 }).success, false);
    assert.equal(consistentHashScorer.params.safeParse({ epsilon: 0.1, other: 1 }).success, false);
  });
});

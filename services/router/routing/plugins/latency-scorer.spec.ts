import assert from "node:assert/strict";
import { candidate, pluginContext, request } from "../../testing/candidates.ts";
import { latencyScorer } from "./latency-scorer.ts";

describe("least-latency scorer", () => {
  const scorer = latencyScorer.create({}, pluginContext());

  it("scores the fastest 1 and the others in proportion", () => {
    const scores = scorer.score(request, [candidate("a", { ttftMs: 20 }), candidate("b", { ttftMs: 10 })]);
    assert.deepEqual(scores, [0.5, 1]);
  });

  it("gives an endpoint with no figure yet a chance (score 1)", () => {
    const scores = scorer.score(request, [candidate("a", { ttftMs: 20 }), candidate("new")]);
    assert.deepEqual(scores, [1, 1]);
  });
});

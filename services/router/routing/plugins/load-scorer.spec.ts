import assert from "node:assert/strict";
import { candidate, load, pluginContext, request } from "../../testing/candidates.ts";
import { loadScorer } from "./load-scorer.ts";

describe("load scorer", () => {
  const scorer = loadScorer.create({}, pluginContext());

  it("prefers short queues and free KV cache", () => {
    const [idle, queued, full] = scorer.score(request, [
      candidate("idle", { load: load() }),
      candidate("queued", { load: load({ running: 2, waiting: 3 }) }),
      candidate("full", { load: load({ kvBlocksUsed: 100 }) }),
    ]);
    assert.equal(idle, 1);
    assert.equal(queued, (1 / 6 + 1) / 2);
    assert.equal(full, 0.5);
  });

  it("counts this router's in-flight requests when the report lags behind", () => {
    const [score] = scorer.score(request, [candidate("a", { inFlight: 3, load: load({ running: 1 }) })]);
    assert.equal(score, (1 / 4 + 1) / 2);
  });

  it("scores 0 without a load report", () => {
    assert.deepEqual(scorer.score(request, [candidate("a")]), [0]);
  });
});

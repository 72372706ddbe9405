import assert from "node:assert/strict";
import { candidate, load, pluginContext, request } from "../../testing/candidates.ts";
import { loadLimitFilter } from "./load-limit-filter.ts";

describe("load-limit filter", () => {
  it("drops endpoints over the queue or KV limits and keeps those without a report", () => {
    const filter = loadLimitFilter.create({ maxWaiting: 4, maxKvUsage: 0.9 }, pluginContext());
    const kept = filter.filter(request, [
      candidate("ok", { load: load({ waiting: 4, kvBlocksUsed: 90 }) }),
      candidate("queued", { load: load({ waiting: 5 }) }),
      candidate("full", { load: load({ kvBlocksUsed: 95 }) }),
      candidate("unknown"),
    ]);
    assert.deepEqual(
      kept.map((c) => c.name),
      ["ok", "unknown"],
    );
  });
});

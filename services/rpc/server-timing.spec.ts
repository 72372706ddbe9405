import assert from "node:assert/strict";
import { parseServerTiming, serverTiming } from "./server-timing.ts";

describe("server-timing", () => {
  it("writes one entry per hop, in order, in milliseconds", () => {
    assert.equal(
      serverTiming({ worker: 812.41234, router: 815.9 }),
      "worker;dur=812.412, router;dur=815.900",
    );
  });

  it("reads what it writes, and the header as browsers and proxies write it", () => {
    assert.deepEqual(parseServerTiming(serverTiming({ worker: 1.5, router: 2 })), { worker: 1.5, router: 2 });
    assert.deepEqual(parseServerTiming('cache;desc="Cache Read";dur=23.2,db;dur=53, app;DUR=47.2'), {
      cache: 23.2,
      db: 53,
      app: 47.2,
    });
  });

  it("skips entries without a usable duration", () => {
    assert.deepEqual(parseServerTiming("miss, edge;dur=, x;dur=abc, ok;dur=3"), { ok: 3 });
    assert.deepEqual(parseServerTiming(""), {});
  });
});

import assert from "node:assert/strict";
import { Backoff, WATCH_BACKOFF } from "./backoff.ts";

describe("backoff", () => {
  it("doubles from 1 s to at most 30 s and starts over after a reset", () => {
    const backoff = new Backoff(WATCH_BACKOFF);
    const delays = Array.from({ length: 7 }, () => backoff.next());
    assert.deepEqual(delays, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    backoff.reset();
    assert.equal(backoff.next(), 1_000);
  });
});

import assert from "node:assert/strict";
import { RestartBackoff } from "./restart-backoff.ts";

describe("restart-backoff", () => {
  it("restarts at once, then after 10 s doubling up to 5 min", () => {
    const backoff = new RestartBackoff({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 });
    const delays = Array.from({ length: 8 }, () => backoff.next(1_000));
    assert.deepEqual(delays, [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it("starts over after a container ran long enough", () => {
    const backoff = new RestartBackoff({ initialMs: 100, maxMs: 1_000, resetAfterMs: 5_000 });
    backoff.next(0);
    backoff.next(0);
    assert.equal(backoff.next(0), 200);
    assert.equal(backoff.next(5_000), 0);
    assert.equal(backoff.next(0), 100);
  });
});

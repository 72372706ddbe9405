import assert from "node:assert/strict";
import { Backoff } from "./backoff.ts";

describe("Backoff", () => {
  it("doubles from the base up to the cap, and starts again after a reset", () => {
    const backoff = new Backoff({ baseMs: 1_000, maxMs: 30_000 });
    assert.deepEqual(
      Array.from({ length: 7 }, () => backoff.next()),
      [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000],
    );
    backoff.reset();
    assert.equal(backoff.next(), 1_000);
  });
});

import assert from "node:assert/strict";
import { ManualClock } from "../../kernel/manual-clock.ts";
import { TokenBucket } from "./token-bucket.ts";

describe("TokenBucket", () => {
  it("allows a burst, then refills at the rate and says when to retry", async () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ perSecond: 2, burst: 3 }, clock);
    assert.deepEqual(
      [bucket.take(1), bucket.take(1), bucket.take(1)],
      [{ ok: true }, { ok: true }, { ok: true }],
    );
    assert.deepEqual(bucket.take(1), { ok: false, retryAfterMs: 500 });
    await clock.advance(500);
    assert.deepEqual(bucket.take(1), { ok: true });
    await clock.advance(10_000);
    assert.equal(bucket.available, 3, "never more than the burst");
  });

  it("lets a cost above the burst through when full, leaving a debt", () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket({ perSecond: 10, burst: 10 }, clock);
    assert.deepEqual(bucket.take(25), { ok: true });
    assert.equal(bucket.available, -15);
    assert.deepEqual(bucket.take(1), { ok: false, retryAfterMs: 1_600 });
  });

  it("takes back refunds up to the burst", () => {
    const bucket = new TokenBucket({ perSecond: 1, burst: 10 }, new ManualClock());
    bucket.take(8);
    bucket.refund(5);
    assert.equal(bucket.available, 7);
    bucket.refund(50);
    assert.equal(bucket.available, 10);
  });
});

import assert from "node:assert/strict";
import { EXP_CUTOFF, expNonPositive } from "./fast-exp.ts";
import { Rng } from "./rng.ts";

function relativeError(x: number): number {
  const exact = Math.exp(x);
  return Math.abs(expNonPositive(x) - exact) / exact;
}

describe("expNonPositive", () => {
  it("is exact at 0 and -0", () => {
    assert.equal(expNonPositive(0), 1);
    assert.equal(expNonPositive(-0), 1);
  });

  it("returns 0 at and below the cutoff and for -Infinity", () => {
    assert.equal(expNonPositive(Number.NEGATIVE_INFINITY), 0);
    assert.equal(expNonPositive(EXP_CUTOFF), 0);
    assert.equal(expNonPositive(-1e6), 0);
    assert.ok(expNonPositive(EXP_CUTOFF + 1e-9) > 0);
  });

  it("stays within 1e-12 relative error of Math.exp over the whole range", () => {
    const rng = new Rng(17n);
    let worst = 0;
    for (let i = 0; i < 200_000; i++) {
      worst = Math.max(worst, relativeError(EXP_CUTOFF * rng.nextFloat()));
      worst = Math.max(worst, relativeError(-2 * rng.nextFloat()));
      worst = Math.max(worst, relativeError(-1e-6 * rng.nextFloat()));
    }
    for (const x of [-1e-300, -Math.LN2 / 128, -Math.LN2 / 64, -Math.LN2, -1, -50, -707.99]) {
      worst = Math.max(worst, relativeError(x));
    }
    assert.ok(worst < 1e-12, `worst relative error ${worst}`);
  });

  it("is monotone across table steps", () => {
    let prev = expNonPositive(0);
    for (let x = -1e-4; x > -20; x -= 0.00731) {
      const y = expNonPositive(x);
      assert.ok(y <= prev, `not monotone at ${x}`);
      prev = y;
    }
  });
});

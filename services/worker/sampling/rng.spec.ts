import assert from "node:assert/strict";
import { Rng, randomSeed, splitMix64 } from "./rng.ts";

function words(rng: Rng, n: number): number[] {
  return Array.from({ length: n }, () => rng.nextUint32());
}

describe("rng", () => {
  it("splitmix64 matches the reference outputs for seed 0", () => {
    assert.deepEqual(splitMix64(0n, 3), [0xe220a8397b1dcdafn, 0x6e789e6aa1b965f4n, 0x06c45d188009454fn]);
  });

  it("xoshiro128** matches the reference outputs for state 1,2,3,4", () => {
    assert.deepEqual(
      words(Rng.fromState(1, 2, 3, 4), 6),
      [11520, 0, 5927040, 70819200, 2031721883, 1637235492],
    );
  });

  it("seeding matches a C reference (splitmix64 -> xoshiro128**)", () => {
    // Generated with the reference C implementations, state words = lo/hi halves of two splitmix64 outputs.
    assert.deepEqual(words(new Rng(0n), 5), [3737715805, 2584255861, 2876756834, 3286328325, 1553311962]);
    assert.deepEqual(words(new Rng(42n), 5), [1776835114, 4165204688, 17111135, 2317295270, 2792088233]);
    assert.deepEqual(
      words(new Rng((1n << 64n) - 1n), 5),
      [477689756, 2493998634, 555695776, 607808419, 61340979],
    );
  });

  it("the same seed gives the same stream; different seeds differ", () => {
    const a = new Rng(1234n);
    const b = new Rng(1234n);
    const c = new Rng(1235n);
    const xs = Array.from({ length: 100 }, () => a.nextFloat());
    assert.deepEqual(
      Array.from({ length: 100 }, () => b.nextFloat()),
      xs,
    );
    assert.notDeepEqual(
      Array.from({ length: 100 }, () => c.nextFloat()),
      xs,
    );
  });

  it("nextFloat is in [0, 1) and roughly uniform", () => {
    const rng = new Rng(7n);
    const bins = new Array<number>(10).fill(0);
    const n = 100_000;
    for (let i = 0; i < n; i++) {
      const x = rng.nextFloat();
      assert.ok(x >= 0 && x < 1);
      bins[Math.floor(x * 10)]! += 1;
    }
    for (const count of bins) assert.ok(Math.abs(count - n / 10) < 600, `bin count ${count}`);
  });

  it("rejects seeds outside 0..2^64-1", () => {
    assert.throws(() => new Rng(-1n), RangeError);
    assert.throws(() => new Rng(1n << 64n), RangeError);
  });

  it("random seeds are 64-bit and vary", () => {
    const seeds = new Set(Array.from({ length: 8 }, () => randomSeed()));
    assert.ok(seeds.size > 1);
    for (const s of seeds) assert.ok(s >= 0n && s < 1n << 64n);
    assert.ok(Rng.random().seed >= 0n);
  });
});

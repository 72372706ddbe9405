import assert from "node:assert/strict";
import { CounterRng, philox4x32 } from "./philox.ts";

describe("philox", () => {
  it("matches Random123's known-answer vectors for Philox4x32-10", () => {
    assert.deepEqual(philox4x32([0, 0, 0, 0], [0, 0]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    const ones = 0xffffffff;
    assert.deepEqual(
      philox4x32([ones, ones, ones, ones], [ones, ones]),
      [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
    );
    assert.deepEqual(
      philox4x32([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
      [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
    );
  });

  it("draws from the block of key = seed, counter = (position, draw): low words first", () => {
    const seed = 0x299f31d0a4093822n;
    const [w0, w1] = philox4x32([0x243f6a88, 0, 3, 0], [0xa4093822, 0x299f31d0]);
    const expected = ((w0 >>> 5) * 2 ** 26 + (w1 >>> 6)) / 2 ** 53;
    assert.equal(new CounterRng(seed).uniform(0x243f6a88, 3), expected);
    const [h0, h1] = philox4x32([5, 2, 0, 0], [0xa4093822, 0x299f31d0]);
    assert.equal(
      new CounterRng(seed).uniform(2 * 2 ** 32 + 5),
      ((h0 >>> 5) * 2 ** 26 + (h1 >>> 6)) / 2 ** 53,
    );
  });

  it("is a pure function of seed and position, whatever was drawn before or by whom", () => {
    const a = new CounterRng(42n);
    const forward = Array.from({ length: 100 }, (_, i) => a.uniform(i));
    const b = new CounterRng(42n);
    const backward = Array.from({ length: 100 }, (_, i) => b.uniform(99 - i)).reverse();
    assert.deepEqual(backward, forward);
    assert.equal(new CounterRng(42n).uniform(57), forward[57]);
  });

  it("differs between positions, draw indices and seeds", () => {
    const rng = new CounterRng(7n);
    const values = new Set<number>();
    for (let position = 0; position < 10_000; position++) values.add(rng.uniform(position));
    assert.equal(values.size, 10_000, "no two positions drew the same number");
    assert.notEqual(rng.uniform(5, 1), rng.uniform(5, 0));
    const other = new CounterRng(8n);
    const same = Array.from({ length: 1000 }, (_, i) => other.uniform(i) === rng.uniform(i));
    assert.ok(!same.some(Boolean), "seeds 7 and 8 share no draw among the first 1000 positions");
  });

  it("is uniform on [0, 1) over positions (chi-square over 20 bins, serial pairs uncorrelated)", () => {
    // Fixed seed and positions: the statistics are computed once and cannot flake. The bounds are the
    // 0.999 quantiles: chi-square with 19 degrees of freedom < 43.8; |correlation| < 3.3 / sqrt(n).
    const rng = new CounterRng(2024n);
    const n = 200_000;
    const bins = new Array<number>(20).fill(0);
    let sum = 0;
    let sumSq = 0;
    let sumLag = 0;
    let previous = rng.uniform(0);
    for (let i = 0; i < n; i++) {
      const x = rng.uniform(i);
      assert.ok(x >= 0 && x < 1, `position ${i}: ${x}`);
      bins[Math.floor(x * 20)]! += 1;
      sum += x;
      sumSq += x * x;
      if (i > 0) sumLag += (x - 0.5) * (previous - 0.5);
      previous = x;
    }
    const expected = n / 20;
    const chiSquare = bins.reduce((acc, count) => acc + (count - expected) ** 2 / expected, 0);
    assert.ok(chiSquare < 43.8, `chi-square ${chiSquare.toFixed(1)} over 20 bins`);
    assert.ok(Math.abs(sum / n - 0.5) < 0.003, `mean ${sum / n}`);
    assert.ok(Math.abs(sumSq / n - 1 / 3) < 0.003, `second moment ${sumSq / n}`);
    const correlation = sumLag / (n - 1) / (1 / 12);
    assert.ok(Math.abs(correlation) < 3.3 / Math.sqrt(n), `lag-1 correlation ${correlation}`);
  });

  it("is uniform across seeds at one position (what one token of many requests sees)", () => {
    const n = 50_000;
    const bins = new Array<number>(10).fill(0);
    for (let seed = 0; seed < n; seed++)
      bins[Math.floor(new CounterRng(BigInt(seed)).uniform(75) * 10)]! += 1;
    const chiSquare = bins.reduce((acc, count) => acc + (count - n / 10) ** 2 / (n / 10), 0);
    assert.ok(chiSquare < 27.9, `chi-square ${chiSquare.toFixed(1)} over 10 bins (9 degrees of freedom)`);
  });

  it("rejects seeds outside 0..2^64-1 and positions that are not non-negative integers", () => {
    assert.throws(() => new CounterRng(-1n), RangeError);
    assert.throws(() => new CounterRng(1n << 64n), RangeError);
    assert.doesNotThrow(() => new CounterRng((1n << 64n) - 1n).uniform(0));
    assert.throws(() => new CounterRng(1n).uniform(-1), /position/);
    assert.throws(() => new CounterRng(1n).uniform(1.5), /position/);
  });

  it("keys unseeded streams from crypto", () => {
    const seeds = new Set(Array.from({ length: 8 }, () => CounterRng.random().seed));
    assert.ok(seeds.size > 1);
  });
});

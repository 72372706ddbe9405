import assert from "node:assert/strict";
import { Rng } from "./rng.ts";
import { topKIndices } from "./top-k.ts";

/** Reference: full sort by value desc, index asc. */
function naiveTopK(values: ArrayLike<number>, k: number): number[] {
  return Array.from({ length: values.length }, (_, i) => i)
    .sort((a, b) => values[b]! - values[a]! || a - b)
    .slice(0, k);
}

describe("topKIndices", () => {
  it("returns the k largest, largest first", () => {
    const v = new Float32Array([0.5, 3, -1, 2, 7, 2.5]);
    assert.deepEqual(Array.from(topKIndices(v, 3)), [4, 1, 5]);
  });

  it("breaks ties by the lowest index, inside and at the boundary", () => {
    const v = new Float32Array([1, 5, 5, 1, 5, 1]);
    assert.deepEqual(Array.from(topKIndices(v, 2)), [1, 2]);
    assert.deepEqual(Array.from(topKIndices(v, 4)), [1, 2, 4, 0]);
  });

  it("handles k = 0, k >= n and -Infinity entries", () => {
    const v = new Float32Array([2, Number.NEGATIVE_INFINITY, 1]);
    assert.equal(topKIndices(v, 0).length, 0);
    assert.deepEqual(Array.from(topKIndices(v, 10)), [0, 2, 1]);
    assert.deepEqual(Array.from(topKIndices(new Float32Array(0), 3)), []);
  });

  it("agrees with a full sort on random inputs with many ties", () => {
    const rng = new Rng(99n);
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + (rng.nextUint32() % 500);
      const v = new Float32Array(n);
      for (let i = 0; i < n; i++) v[i] = Math.floor(rng.nextFloat() * 20) - 10;
      const k = rng.nextUint32() % (n + 3);
      assert.deepEqual(Array.from(topKIndices(v, k)), naiveTopK(v, k), `trial ${trial}`);
    }
  });
});

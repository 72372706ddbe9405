import assert from "node:assert/strict";
import { selectNucleus } from "./nucleus.ts";
import { Rng } from "./rng.ts";

/** Reference: sort by weight desc, id asc, take the shortest prefix reaching `target`. */
function naiveNucleus(weights: number[], target: number): number[] {
  const order = weights.map((_, i) => i).sort((a, b) => weights[b]! - weights[a]! || a - b);
  let mass = 0;
  const out: number[] = [];
  for (const id of order) {
    out.push(id);
    mass += weights[id]!;
    if (mass >= target) break;
  }
  return out;
}

function run(weights: number[], topP: number): number[] {
  const ids = Int32Array.from(weights.map((_, i) => i));
  const w = Float64Array.from(weights);
  const total = weights.reduce((a, b) => a + b, 0);
  const size = selectNucleus(ids, w, ids.length, topP * total);
  // The arrays stay parallel.
  for (let i = 0; i < ids.length; i++) assert.equal(w[i], weights[ids[i]!]);
  return Array.from(ids.subarray(0, size)).sort((a, b) => a - b);
}

describe("selectNucleus", () => {
  it("keeps the smallest heaviest set reaching top_p", () => {
    const w = [0.1, 0.4, 0.05, 0.3, 0.15];
    assert.deepEqual(run(w, 0.4), [1]);
    assert.deepEqual(run(w, 0.5), [1, 3]);
    assert.deepEqual(run(w, 0.7), [1, 3]);
    assert.deepEqual(run(w, 0.71), [1, 3, 4]);
    assert.deepEqual(run(w, 1), [0, 1, 2, 3, 4]);
  });

  it("keeps at least one entry for a tiny top_p", () => {
    assert.deepEqual(run([0.2, 0.5, 0.3], 1e-9), [1]);
  });

  it("takes tied entries at the boundary lowest id first", () => {
    assert.deepEqual(run([1, 1, 1, 1, 1], 0.4), [0, 1]);
    assert.deepEqual(run([1, 3, 1, 1, 3], 0.7), [0, 1, 4]);
  });

  it("ignores zero weights unless needed by rounding", () => {
    assert.deepEqual(run([0, 0, 2, 0], 0.99), [2]);
  });

  it("agrees with a full sort on random inputs", () => {
    const rng = new Rng(5n);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + (rng.nextUint32() % 300);
      const ties = trial % 2 === 0;
      const weights = Array.from({ length: n }, () =>
        ties ? Math.floor(rng.nextFloat() * 8) : Math.exp(8 * rng.nextFloat()),
      );
      if (!weights.some((x) => x > 0)) weights[0] = 1;
      const topP = 0.01 + 0.99 * rng.nextFloat();
      const total = weights.reduce((a, b) => a + b, 0);
      const expected = naiveNucleus(weights, topP * total).sort((a, b) => a - b);
      assert.deepEqual(run(weights, topP), expected, `trial ${trial}`);
    }
  });
});

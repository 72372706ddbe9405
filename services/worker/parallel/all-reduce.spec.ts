import assert from "node:assert/strict";
import { AllReduce, type ReduceKey } from "./all-reduce.ts";

const key = (segment: number): ReduceKey => ({ stepId: 7n, microBatch: 0, segment });

/** n ranks (global ids 10, 11, ...) wired in memory; parts are delivered on a later tick, in any order. */
function group(n: number): AllReduce[] {
  const ranks = Array.from({ length: n }, (_, i) => 10 + i);
  const members: AllReduce[] = [];
  for (const self of ranks)
    members.push(
      new AllReduce(ranks, self, (to, key, data) =>
        setImmediate(() => members[to - 10]!.deliver(self, key, data.slice())),
      ),
    );
  return members;
}

const parts = (n: number) =>
  Array.from({ length: n }, (_, r) => Float32Array.from({ length: 5 }, (_, i) => 0.1 * (r + 1) + i / 3));

describe("AllReduce", () => {
  for (const n of [1, 2, 3, 4, 8])
    it(`sums the parts of ${n} ranks, bit-identical on every rank`, async () => {
      const members = group(n);
      const input = parts(n);
      const sums = await Promise.all(members.map((m, r) => m.reduce(key(0), input[r]!)));
      for (let i = 0; i < 5; i++) {
        const exact = input.reduce((acc, p) => acc + p[i]!, 0);
        assert.ok(Math.abs(sums[0]![i]! - exact) < 1e-5);
      }
      for (const s of sums) assert.deepEqual(s, sums[0]);
    });

  it("keeps parts that arrive before the rank asks, and tells calls apart by key", async () => {
    const [a, b] = group(2) as [AllReduce, AllReduce];
    const early = b.reduce(key(2), Float32Array.of(20));
    const first = b.reduce(key(1), Float32Array.of(10));
    await new Promise((resolve) => setImmediate(resolve));
    const [x1, x2] = await Promise.all([
      a.reduce(key(1), Float32Array.of(1)),
      a.reduce(key(2), Float32Array.of(2)),
    ]);
    assert.deepEqual([x1[0], x2[0], (await first)[0], (await early)[0]], [11, 22, 11, 22]);
    assert.equal(a.sentFloats, 2);
  });

  it("fails waiting and later reduces once the group is gone", async () => {
    const [a] = group(2) as [AllReduce, AllReduce];
    const waiting = a.reduce(key(1), Float32Array.of(1));
    a.fail();
    await assert.rejects(waiting, /tensor group is gone/);
    await assert.rejects(a.reduce(key(2), Float32Array.of(1)), /tensor group is gone/);
  });
});

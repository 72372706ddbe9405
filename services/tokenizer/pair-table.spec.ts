import assert from "node:assert/strict";
import { PairTable } from "./pair-table.ts";

describe("PairTable", () => {
  it("stores, replaces and finds pairs; absent pairs give -1", () => {
    const t = new PairTable(3);
    t.set(1, 2, 10);
    t.set(2, 1, 20);
    t.set(1, 2, 11);
    assert.equal(t.get(1, 2), 11);
    assert.equal(t.get(2, 1), 20);
    assert.equal(t.get(0, 0), -1);
    assert.equal(t.size, 2);
  });

  it("agrees with a Map over many colliding pairs", () => {
    const t = new PairTable(20_000);
    const m = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const a = (i * 7919) % 150_000;
      const b = (i * 104_729) % 1024;
      t.set(a, b, i);
      m.set(`${a},${b}`, i);
    }
    for (const [k, v] of m) {
      const [a, b] = k.split(",").map(Number);
      assert.equal(t.get(a!, b!), v);
    }
    assert.equal(t.get(149_999, 1023), -1);
  });

  it("refuses more pairs than its capacity allows", () => {
    const t = new PairTable(1);
    assert.throws(() => {
      for (let i = 0; i < 100; i++) t.set(i, i, i);
    }, RangeError);
  });
});

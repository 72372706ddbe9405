import assert from "node:assert/strict";
import { HashRing, positionOf } from "./hash-ring.ts";

const keys = Array.from({ length: 4_000 }, (_, i) => positionOf(`key-${i}`));

function shares(ring: HashRing): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) {
    const home = ring.home(key)!;
    counts.set(home, (counts.get(home) ?? 0) + 1);
  }
  return counts;
}

describe("HashRing", () => {
  const four = ["w1", "w2", "w3", "w4"];

  it("walks every member once, starting at the key's home", () => {
    const ring = new HashRing(four, 64);
    for (const key of keys.slice(0, 50)) {
      const walk = ring.walk(key);
      assert.deepEqual([...walk].sort(), four);
      assert.equal(walk[0], ring.home(key));
    }
  });

  it("gives the same homes whatever order the members come in", () => {
    const a = new HashRing(four, 64);
    const b = new HashRing([...four].reverse(), 64);
    assert.ok(keys.every((key) => a.home(key) === b.home(key)));
  });

  it("spreads keys evenly with enough virtual nodes", () => {
    for (const count of shares(new HashRing(four, 256)).values()) {
      assert.ok(Math.abs(count / keys.length - 0.25) < 0.05, `share ${count / keys.length}`);
    }
  });

  it("moves only the keys the new member takes over when one is added", () => {
    const before = new HashRing(four, 256);
    const after = new HashRing([...four, "w5"], 256);
    const moved = keys.filter((key) => before.home(key) !== after.home(key));
    assert.ok(
      moved.every((key) => after.home(key) === "w5"),
      "every moved key moves to the new member",
    );
    assert.ok(moved.length / keys.length < 0.25, `moved ${moved.length / keys.length}`);
  });

  it("has no home when empty", () => {
    const ring = new HashRing([], 16);
    assert.equal(ring.home(5), undefined);
    assert.deepEqual(ring.walk(5), []);
  });
});

import assert from "node:assert/strict";
import { SlotMap } from "./slot-map.ts";

describe("SlotMap", () => {
  it("gets, replaces and deletes by key, reusing freed slots", () => {
    const map = new SlotMap<{ n: number }>();
    const a = { n: 1 };
    map.set("a", a);
    map.set("b", { n: 2 });
    assert.equal(map.get("a"), a);
    assert.equal(map.size, 2);
    map.set("a", { n: 3 });
    assert.equal(map.get("a")?.n, 3);
    assert.equal(map.size, 2);
    assert.equal(map.delete("a"), true);
    assert.equal(map.delete("a"), false);
    assert.equal(map.has("a"), false);
    assert.equal(map.get("a"), undefined);
    map.set("c", { n: 4 });
    assert.equal(map.get("b")?.n, 2);
    assert.equal(map.get("c")?.n, 4);
    assert.equal(map.size, 2);
  });
});

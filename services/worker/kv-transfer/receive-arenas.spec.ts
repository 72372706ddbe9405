import assert from "node:assert/strict";
import { ReceiveArenas } from "./receive-arenas.ts";

describe("ReceiveArenas", () => {
  it("hands a given-back arena out again when it is large enough, and keeps only `keep` of them", () => {
    const arenas = new ReceiveArenas({ keep: 1, prefault: { count: 2, bytes: 1024 } });
    const first = arenas.take(1000);
    assert.equal(first.length, 1024);
    const larger = arenas.take(4096);
    assert.equal(larger.length, 4096);
    arenas.give(first);
    arenas.give(larger); // beyond `keep`: dropped
    assert.equal(arenas.take(512), first);
    assert.notEqual(arenas.take(512), first);
  });
});

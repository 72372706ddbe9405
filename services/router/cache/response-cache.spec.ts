import assert from "node:assert/strict";
import { ManualClock } from "../../kernel/manual-clock.ts";
import { ResponseCache } from "./response-cache.ts";

describe("ResponseCache", () => {
  it("evicts the least recently used entry beyond maxEntries", () => {
    const cache = new ResponseCache<string>(
      { maxEntries: 2, maxBytes: 1_000, ttlMs: 60_000 },
      new ManualClock(),
    );
    cache.set("a", "A", 1);
    cache.set("b", "B", 1);
    assert.equal(cache.get("a"), "A");
    cache.set("c", "C", 1);
    assert.equal(cache.get("b"), undefined, "b was used least recently");
    assert.deepEqual([cache.get("a"), cache.get("c")], ["A", "C"]);
  });

  it("keeps within the byte budget and refuses a value larger than all of it", () => {
    const cache = new ResponseCache<string>(
      { maxEntries: 100, maxBytes: 10, ttlMs: 60_000 },
      new ManualClock(),
    );
    cache.set("a", "A", 4);
    cache.set("b", "B", 4);
    cache.set("c", "C", 4);
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.bytes, 8);
    cache.set("huge", "H", 11);
    assert.equal(cache.get("huge"), undefined);
    assert.equal(cache.size, 2);
  });

  it("expires entries after the TTL", async () => {
    const clock = new ManualClock();
    const cache = new ResponseCache<string>({ maxEntries: 10, maxBytes: 100, ttlMs: 1_000 }, clock);
    cache.set("a", "A", 5);
    await clock.advance(999);
    assert.equal(cache.get("a"), "A");
    await clock.advance(1);
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.bytes, 0);
  });

  it("replaces a value set twice without counting it twice", () => {
    const cache = new ResponseCache<string>(
      { maxEntries: 10, maxBytes: 100, ttlMs: 1_000 },
      new ManualClock(),
    );
    cache.set("a", "A", 5);
    cache.set("a", "A2", 7);
    assert.equal(cache.get("a"), "A2");
    assert.equal(cache.bytes, 7);
  });
});

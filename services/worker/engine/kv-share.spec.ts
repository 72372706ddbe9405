// Virtual engines' shares of one KV pool: an engine stays within its share while the pool has room, the
// prefix cache stays shared, and the shares add up to the pool.
import assert from "node:assert/strict";
import { BlockPool } from "../kv/block-pool.ts";
import { emptyRequestKv } from "../kv/kv-cache-manager.ts";
import { KvShare, splitBlocks } from "./kv-share.ts";
import { leastLoaded } from "./virtual-engines.ts";

const tokens = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

describe("KvShare", () => {
  it("refuses past its share although the pool has room, and never starves another share", () => {
    const pool = new BlockPool(8, 4);
    const [a, b] = splitBlocks(8, 2).map((share) => new KvShare(pool, "m", true, share));
    const first = emptyRequestKv();
    assert.ok(a!.allocate(first, 12)); // 3 blocks
    assert.equal(a!.allocate(emptyRequestKv(), 8), false, "2 more would pass a's 4");
    assert.equal(pool.numFree, 5);
    const other = emptyRequestKv();
    assert.ok(b!.allocate(other, 16), "b gets its whole share");
    a!.free(first);
    assert.equal(a!.numHeld, 0);
    assert.ok(a!.allocate(emptyRequestKv(), 16));
    pool.checkInvariants();
  });

  it("shares cached prefix blocks between engines, each counting them once", () => {
    const pool = new BlockPool(8, 4);
    const [a, b] = [new KvShare(pool, "m", true, 4), new KvShare(pool, "m", true, 4)];
    const prompt = tokens(9);
    const first = emptyRequestKv();
    assert.ok(a.allocate(first, 9));
    a.cacheComputedBlocks(first, prompt, 9);
    const cached = b.findCachedPrefix(prompt);
    assert.deepEqual(cached.blocks, first.blocks.slice(0, 2));
    const second = emptyRequestKv();
    assert.ok(b.allocate(second, 9, cached));
    assert.deepEqual(second.blocks.slice(0, 2), first.blocks.slice(0, 2));
    assert.equal(b.numHeld, 3);
    assert.equal(pool.numUsed, 4, "the two prefix blocks are held once in the pool");
    b.free(second);
    a.free(first);
    assert.equal(pool.numUsed, 0);
    pool.checkInvariants();
  });

  it("splits the pool into shares that add up to it", () => {
    assert.deepEqual(splitBlocks(10, 3), [4, 3, 3]);
    assert.deepEqual(splitBlocks(8, 2), [4, 4]);
  });
});

describe("leastLoaded", () => {
  it("picks the engine with the fewest requests, the first on a tie", () => {
    const q = (running: number, waiting: number) => ({
      running: tokens(running),
      waiting: tokens(waiting),
    });
    assert.equal(leastLoaded([q(2, 0), q(1, 0)]), 1);
    assert.equal(leastLoaded([q(1, 1), q(2, 0), q(0, 3)]), 0);
  });
});

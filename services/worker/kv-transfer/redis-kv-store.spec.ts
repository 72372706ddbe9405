import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { testBlocks, testFormat } from "./kv-test-blocks.ts";
import { openTestStore, type TestStoreOptions } from "./kv-test-store.ts";
import { RedisServer } from "./redis-harness.ts";
import type { RedisKvStore } from "./redis-kv-store.ts";

describe("RedisKvStore on a real redis-server", () => {
  let server: RedisServer;
  let raw: Redis;
  const stores: RedisKvStore[] = [];
  const open = async (options?: TestStoreOptions) => {
    const store = await openTestStore(server.url, options);
    stores.push(store);
    assert.deepEqual(store.health, { status: "SERVING" });
    return store;
  };

  before(async () => {
    server = await RedisServer.start();
    raw = new Redis(server.url);
  });
  after(async () => {
    raw?.disconnect();
    await server?.close();
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await raw.flushall();
  });

  it("round-trips many blocks through several pipelines, in order, with missing ones undefined", async () => {
    const store = await open({ config: { maxPipelineBytes: 64 * 1024 } });
    const blocks = testBlocks(store.format, 300);
    await store.putBlocks(blocks);
    const absent = testBlocks(store.format, 2, 99).map((b) => b.hash);
    const got = await store.getBlocks([...blocks.map((b) => b.hash), ...absent]);
    assert.equal(got.length, 302);
    blocks.forEach((block, i) => {
      assert.deepEqual(got[i]?.data, block.data);
      assert.deepEqual(Array.from(got[i]!.tokens), block.tokens);
    });
    assert.deepEqual(got.slice(300), [undefined, undefined]);
    const stats = store.stats();
    assert.deepEqual(stats.blocks, { "put.stored": 300, "get.hit": 300, "get.miss": 2 });
    assert.equal(stats.bytesIn, stats.bytesOut);
    assert.deepEqual(await store.hasBlocks([blocks[7]!.hash, absent[0]!]), [true, false]);
  });

  it("readBlocks: two reads at once each see their own blocks in order, skipping missing ones", async () => {
    const store = await open({ config: { maxPipelineBytes: 64 * 1024, connections: 3 } });
    const [a, b] = [testBlocks(store.format, 120, 1), testBlocks(store.format, 120, 2)];
    await store.putBlocks([...a, ...b]);
    const missing = testBlocks(store.format, 1, 99)[0]!.hash;
    const read = async (blocks: typeof a) => {
      const seen: number[] = [];
      const hashes = blocks.map((x) => x.hash);
      await store.readBlocks([...hashes.slice(0, 60), missing, ...hashes.slice(60)], (i, block) => {
        const want = i < 60 ? blocks[i]! : blocks[i - 1]!;
        assert.deepEqual(block.data, want.data, `block ${i}`);
        assert.equal(block.hash, want.hash);
        seen.push(i);
      });
      return seen;
    };
    const all = Array.from({ length: 121 }, (_, i) => i).filter((i) => i !== 60);
    assert.deepEqual(await Promise.all([read(a), read(b)]), [all, all]);
  });

  it("answers empty batches without a round trip failing", async () => {
    const store = await open();
    await store.putBlocks([]);
    assert.deepEqual(await store.getBlocks([]), []);
    assert.deepEqual(await store.hasBlocks([]), []);
    assert.equal(await store.deleteModel(), 0);
  });

  it("stores every block under its model, revision and layer range with the configured TTL", async () => {
    const store = await open({ config: { ttlMs: 60_000 } });
    const [block] = testBlocks(store.format, 1);
    await store.putBlocks([block!]);
    const key = store.keyOf(block!.hash);
    assert.equal(key, `tessera:kv:tiny@r1:2-4:${block!.hash}`);
    const ttl = await raw.pttl(key);
    assert.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`);
  });

  it("detects one flipped byte in a stored value, counts it, returns the block as missing and drops it", async () => {
    const store = await open();
    const blocks = testBlocks(store.format, 3);
    await store.putBlocks(blocks);
    const key = store.keyOf(blocks[1]!.hash);
    const value = (await raw.getBuffer(key))!;
    value[value.length - 5] = value[value.length - 5]! ^ 0x01;
    await raw.set(key, value);
    const got = await store.getBlocks(blocks.map((b) => b.hash));
    assert.deepEqual(
      got.map((b) => b !== undefined),
      [true, false, true],
    );
    assert.equal(store.stats().blocks["get.checksum_failure"], 1);
    assert.equal(await raw.exists(key), 0);
  });

  it("rejects a block of another model, revision or shape found under its key", async () => {
    const writer = await open();
    const [block] = testBlocks(writer.format, 1);
    await writer.putBlocks([block!]);
    const value = (await raw.getBuffer(writer.keyOf(block!.hash)))!;
    for (const format of [
      testFormat({ modelId: "other" }),
      testFormat({ revision: "r2" }),
      testFormat({ shape: { blockSize: 4, kvHeads: 1, headDim: 16 } }),
    ]) {
      const reader = await open({ format });
      await raw.set(reader.keyOf(block!.hash), value);
      assert.deepEqual(await reader.getBlocks([block!.hash]), [undefined]);
      assert.deepEqual(reader.stats().blocks, { "get.mismatch": 1 });
    }
  });

  it("deletes only the given model's keys, every revision and layer range of it", async () => {
    const formats = [
      testFormat(),
      testFormat({ revision: "r2" }),
      testFormat({ layerRange: { start: 0, end: 2 } }),
      testFormat({ modelId: "tiny-2" }),
      testFormat({ modelId: "other" }),
    ];
    const writers = await Promise.all(formats.map((format) => open({ format })));
    for (const writer of writers) await writer.putBlocks(testBlocks(writer.format, 5));
    await raw.set("unrelated", "x");
    assert.equal(await writers[0]!.deleteModel(), 15);
    assert.equal(await raw.dbsize(), 11);
    assert.equal((await raw.keys("tessera:kv:tiny@*")).length, 0);
    assert.equal(await writers[4]!.deleteModel("tiny-2"), 5);
    const left = await raw.keys("*");
    assert.equal(left.length, 6);
    assert.ok(
      left.every((key) => key === "unrelated" || key.startsWith("tessera:kv:other@r1:")),
      String(left),
    );
  });
});

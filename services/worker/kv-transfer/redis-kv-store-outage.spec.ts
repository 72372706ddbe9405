import assert from "node:assert/strict";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { baseFormat, testBlocks, testFormat } from "./kv-test-blocks.ts";
import { manualTimer, openTestStore, trackUnhandledRejections } from "./kv-test-store.ts";
import type { KvStoreHealth } from "./redis-connection.ts";
import { RedisServer } from "./redis-harness.ts";
import type { RedisKvStore } from "./redis-kv-store.ts";

function nextHealth(store: RedisKvStore, status: KvStoreHealth["status"]): Promise<KvStoreHealth> {
  if (store.health.status === status) return Promise.resolve(store.health);
  return new Promise((resolve) => {
    const stop = store.onHealth((health) => {
      if (health.status !== status) return;
      stop();
      resolve(health);
    });
  });
}

function isCode(code: Code): (err: unknown) => boolean {
  return (err) => err instanceof TesseraError && err.code === code;
}

describe("RedisKvStore when Redis fails", () => {
  let server: RedisServer | undefined;
  let store: RedisKvStore | undefined;
  let unhandled: ReturnType<typeof trackUnhandledRejections>;

  beforeEach(() => {
    unhandled = trackUnhandledRejections();
  });
  afterEach(async () => {
    await store?.close();
    await server?.close();
    store = server = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    unhandled.stop();
    assert.deepEqual(unhandled.reasons, []);
  });

  it("rejects with UNAVAILABLE when Redis dies mid-batch, fails fast while it is down, and recovers", async () => {
    server = await RedisServer.start();
    store = await openTestStore(server.url, {
      format: baseFormat(),
      config: { maxPipelineBytes: 2 * 1024 * 1024 },
    });
    const blocks = testBlocks(baseFormat(), 60);
    const put = assert.rejects(store.putBlocks(blocks), isCode(Code.UNAVAILABLE));
    await server.kill();
    await put;
    const down = await nextHealth(store, "NOT_SERVING");
    assert.equal(down.status, "NOT_SERVING");
    await assert.rejects(store.getBlocks([blocks[0]!.hash]), isCode(Code.UNAVAILABLE));

    await server.restart();
    await nextHealth(store, "SERVING");
    await store.putBlocks(blocks.slice(0, 3));
    const got = await store.getBlocks(blocks.slice(0, 4).map((b) => b.hash));
    assert.deepEqual(
      got.map((b) => b !== undefined),
      [true, true, true, false],
    );
    assert.ok((store.stats().failures["put.UNAVAILABLE"] ?? 0) >= 1);
  });

  it("replaces bulk connections Redis dropped: the next batch after the drop finds its blocks", async () => {
    server = await RedisServer.start();
    store = await openTestStore(server.url, { format: baseFormat(), config: { connections: 3 } });
    const blocks = testBlocks(baseFormat(), 6);
    await store.putBlocks(blocks);
    const { Redis } = await import("ioredis");
    const admin = new Redis(server.url);
    try {
      const killed = await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
      assert.ok(Number(killed) >= 3, `${killed} clients killed`);
    } finally {
      admin.disconnect();
    }
    // A batch sent before the store saw the drop fails as UNAVAILABLE (the caller recomputes)…
    await store.getBlocks(blocks.map((b) => b.hash)).catch((err: unknown) => {
      assert.ok(isCode(Code.UNAVAILABLE)(err), String(err));
    });
    await nextHealth(store, "SERVING");
    // …and the next one goes over fresh connections.
    const got = await store.getBlocks(blocks.map((b) => b.hash));
    assert.deepEqual(
      got.map((b) => b?.hash),
      blocks.map((b) => b.hash),
    );
  });

  it("rejects with DEADLINE_EXCEEDED when Redis hangs, then fails fast until it answers again", async () => {
    server = await RedisServer.start();
    const timer = manualTimer();
    store = await openTestStore(server.url, { setTimer: timer.setTimer });
    const blocks = testBlocks(store.format, 4);
    await store.putBlocks(blocks);
    server.pause();
    const get = assert.rejects(
      store.getBlocks(blocks.map((b) => b.hash)),
      (err: unknown) => isCode(Code.DEADLINE_EXCEEDED)(err) && /within 2000 ms/.test(String(err)),
    );
    timer.fire();
    await get;
    assert.equal(store.health.status, "NOT_SERVING");
    await assert.rejects(store.hasBlocks([blocks[0]!.hash]), isCode(Code.UNAVAILABLE));

    server.resume();
    await nextHealth(store, "SERVING");
    assert.equal((await store.getBlocks([blocks[1]!.hash]))[0]?.hash, blocks[1]!.hash);
    assert.deepEqual(store.stats().failures, { "get.DEADLINE_EXCEEDED": 1, "has.UNAVAILABLE": 1 });
  });

  it("with maxmemory 2mb and allkeys-lru, puts succeed and evicted blocks are misses, not errors", async () => {
    server = await RedisServer.start({ maxmemory: "2mb", maxmemoryPolicy: "allkeys-lru" });
    const format = testFormat({ shape: { blockSize: 16, kvHeads: 2, headDim: 64 } }); // 32 KiB blocks
    store = await openTestStore(server.url, { format, config: { maxPipelineBytes: 256 * 1024 } });
    const blocks = testBlocks(format, 200); // 6.4 MiB
    await store.putBlocks(blocks);
    const got = await store.getBlocks(blocks.map((b) => b.hash));
    const hits = got.filter((b) => b !== undefined).length;
    assert.ok(hits > 0 && hits < blocks.length, `${hits} hits`);
    got.forEach((block, i) => {
      if (block !== undefined) assert.deepEqual(block.data, blocks[i]!.data);
    });
    assert.deepEqual(store.stats().blocks, { "put.stored": 200, "get.hit": hits, "get.miss": 200 - hits });
  });

  it("reports NOT_SERVING with the reason when the password is wrong, and serves with the right one", async () => {
    server = await RedisServer.start({ password: "s3cret" });
    store = await openTestStore(`redis://127.0.0.1:${server.port}`, { config: { password: "wrong" } });
    assert.equal(store.health.status, "NOT_SERVING");
    assert.match(
      (store.health as { reason: string }).reason,
      /^authentication to redis:\/\/127\.0\.0\.1:\d+ failed: WRONGPASS/,
    );
    await assert.rejects(
      store.getBlocks(["00"]),
      (err: unknown) =>
        isCode(Code.UNAVAILABLE)(err) && /Redis unavailable: authentication .* failed/.test(String(err)),
    );
    await store.close();

    store = await openTestStore(server.url);
    assert.deepEqual(store.health, { status: "SERVING" });
  });

  it("authenticates an ACL user with username and password", async () => {
    server = await RedisServer.start({ password: "admin" });
    const admin = await openTestStore(server.url);
    await admin.close();
    const { Redis } = await import("ioredis");
    const raw = new Redis(server.url);
    await raw.call("ACL", "SETUSER", "kv", "on", ">kv-pass", "~tessera:kv:*", "+@all");
    raw.disconnect();
    store = await openTestStore(`redis://127.0.0.1:${server.port}`, {
      config: { username: "kv", password: "kv-pass" },
    });
    assert.deepEqual(store.health, { status: "SERVING" });
    const [block] = testBlocks(store.format, 1);
    await store.putBlocks([block!]);
    assert.equal((await store.getBlocks([block!.hash]))[0]?.hash, block!.hash);
  });
});

import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { testBlocks } from "./kv-test-blocks.ts";
import { openTestStore } from "./kv-test-store.ts";
import { RedisServer } from "./redis-harness.ts";
import { measureRawRedis, measureRedisBenchmark, measureStore } from "./redis-throughput.ts";

describe("KV transfer throughput helpers", () => {
  it("measure raw SET/GET and the store's put/get, leaving no raw keys behind", async () => {
    const server = await RedisServer.start();
    const store = await openTestStore(server.url);
    try {
      const raw = await measureRawRedis(server.url, 4096, 20);
      const tuned = await measureRawRedis(server.url, 4096, 20, { connections: 3, pipeline: 4, rounds: 3 });
      const benchmark = await measureRedisBenchmark(server.url, 4096, 20, { rounds: 200 });
      const through = await measureStore(store, testBlocks(store.format, 20), 3);
      for (const t of [raw, tuned, benchmark, through])
        for (const figure of [t.setBytesPerS, t.getBytesPerS])
          assert.ok(Number.isFinite(figure) && figure > 0);
      const redis = new Redis(server.url);
      // Only the store's own blocks are left: no raw or redis-benchmark keys.
      assert.deepEqual(
        (await redis.keys("*")).filter((k) => !k.startsWith("tessera:kv:")),
        [],
      );
      redis.disconnect();
    } finally {
      await store.close();
      await server.close();
    }
  });
});

describe("raw Redis measurements refuse what they cannot do", () => {
  it("names the bad option", async () => {
    await assert.rejects(measureRawRedis("redis://127.0.0.1:1", 16, 4, { connections: 0 }), /connections: 0/);
    await assert.rejects(measureRawRedis("redis://127.0.0.1:1", 16, 4, { pipeline: 1.5 }), /pipeline: 1.5/);
    await assert.rejects(measureRawRedis("redis://127.0.0.1:1", 16, 4, { rounds: 0 }), /rounds: 0/);
    await assert.rejects(measureRedisBenchmark("rediss://127.0.0.1:1", 16, 4), /url: rediss: /);
  });
});

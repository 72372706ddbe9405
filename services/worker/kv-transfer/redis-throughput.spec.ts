import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { testBlocks } from "./kv-test-blocks.ts";
import { openTestStore } from "./kv-test-store.ts";
import { RedisServer } from "./redis-harness.ts";
import { measureRawRedis, measureStore } from "./redis-throughput.ts";

describe("KV transfer throughput helpers", () => {
  it("measure raw SET/GET and the store's put/get, leaving no raw keys behind", async () => {
    const server = await RedisServer.start();
    const store = await openTestStore(server.url);
    try {
      const raw = await measureRawRedis(server.url, 4096, 20);
      const through = await measureStore(store, testBlocks(store.format, 20));
      for (const figure of [raw.setBytesPerS, raw.getBytesPerS, through.setBytesPerS, through.getBytesPerS])
        assert.ok(Number.isFinite(figure) && figure > 0);
      const redis = new Redis(server.url);
      assert.deepEqual(await redis.keys("tessera:bench:*"), []);
      redis.disconnect();
    } finally {
      await store.close();
      await server.close();
    }
  });
});

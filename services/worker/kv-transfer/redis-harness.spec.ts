import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { REDIS_SERVER_MISSING, RedisServer } from "./redis-harness.ts";

describe("redis-server harness", () => {
  it("starts a server with a password and a memory limit, restarts it on the same port and stops it", async () => {
    const server = await RedisServer.start({
      password: "pw",
      maxmemory: "3mb",
      maxmemoryPolicy: "allkeys-lru",
    });
    try {
      const redis = new Redis(server.url);
      assert.deepEqual(await redis.config("GET", "maxmemory"), ["maxmemory", String(3 * 1024 * 1024)]);
      assert.deepEqual(await redis.config("GET", "maxmemory-policy"), ["maxmemory-policy", "allkeys-lru"]);
      assert.deepEqual(await redis.config("GET", "save"), ["save", ""]);
      await redis.set("k", "v");
      redis.disconnect();

      const port = server.port;
      await server.restart();
      assert.equal(server.port, port);
      const again = new Redis(server.url);
      assert.equal(await again.get("k"), null);
      again.disconnect();
      await server.stop();
      assert.equal(server.running, false);
    } finally {
      await server.close();
    }
  });

  it("fails with a message telling to run scripts/setup.sh when redis-server is missing", async () => {
    const path = process.env["PATH"];
    process.env["PATH"] = "/nonexistent";
    try {
      await assert.rejects(RedisServer.start(), (err: Error) => err.message === REDIS_SERVER_MISSING);
    } finally {
      process.env["PATH"] = path;
    }
    assert.match(REDIS_SERVER_MISSING, /run scripts\/setup\.sh/);
  });
});

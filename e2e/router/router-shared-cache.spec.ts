// The response cache's Redis backing (cache.redis) with a real redis-server: a deterministic request
// one router answered is a hit on another router that never saw it (no worker call), the entry
// expires with the cache's TTL, and a router whose Redis is gone still serves (misses go upstream).
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "./fleet.ts";
import { generate, idsOf, type Request } from "./grpc-stream.ts";

const greedy = (text: string): Request => ({
  prompt: { case: "text", value: text },
  sampling: { maxTokens: 6, temperature: 0 },
});

describe("shared response cache in Redis (e2e)", () => {
  let redis: RedisServer;
  let workers: Served[];
  let routers: RunningRouter[];
  let clients: GrpcClient[];

  before(async () => {
    redis = await RedisServer.start();
    workers = await sharedWorkers();
    const cache = { enabled: true, ttlMs: 1_500, redis: { url: redis.url, keyPrefix: "test:rc:" } };
    routers = await Promise.all([startRouter(workers, { cache }), startRouter(workers, { cache })]);
    clients = routers.map((r) => new GrpcClient(r.grpcAddress));
  });

  after(async () => {
    for (const client of clients) client.close();
    await Promise.all(routers.map((r) => r.stop()));
    await redis.close();
  });

  it("answers on one router what another router generated, with the same tokens", async () => {
    const [a, b] = clients as [GrpcClient, GrpcClient];
    const first = await generate(a, greedy("Shared between routers"));
    assert.equal(first.error, undefined);
    assert.equal(first.cache, "miss");
    let second = await generate(b, greedy("Shared between routers"));
    // The first router stores the answer once its stream ended: give the write a moment.
    for (let i = 0; i < 20 && second.cache !== "hit"; i++) {
      await delay(25);
      second = await generate(b, greedy(`warm-up ${i}`));
      second = await generate(b, greedy("Shared between routers"));
    }
    assert.equal(second.cache, "hit");
    assert.deepEqual(idsOf(second), idsOf(first));
    assert.equal(second.endpoint, first.endpoint);
  });

  it("lets entries expire with the cache's TTL", async () => {
    const [a, b] = clients as [GrpcClient, GrpcClient];
    assert.equal((await generate(a, greedy("Short-lived answer"))).cache, "miss");
    await delay(1_700);
    assert.equal((await generate(b, greedy("Short-lived answer"))).cache, "miss");
  });

  it("keeps serving when Redis goes away: lookups miss and go upstream", async () => {
    const [a] = clients as [GrpcClient];
    await redis.kill();
    try {
      const answer = await generate(a, greedy("Redis is down"));
      assert.equal(answer.error, undefined);
      assert.equal(answer.cache, "miss");
      assert.equal(idsOf(answer).length, 6);
    } finally {
      await redis.restart();
    }
  });
});

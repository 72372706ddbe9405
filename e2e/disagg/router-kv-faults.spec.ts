// KV transfer faults under disaggregated serving through the router, on real processes and a real
// redis-server: Redis killed while a request is handed over, Redis at `maxmemory 2mb` evicting
// blocks, and a prefill worker that dies before the decode worker pulls its blocks (which never
// reached Redis). A request never returns wrong tokens: it recomputes (policy recompute) or fails
// cleanly with UNAVAILABLE (policy fail), within its deadline; afterwards the workers' KV blocks are
// free again. A seeded sampled request gives the same tokens split between prefill and decode and,
// with Redis down, whole on one worker.
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import type { Served } from "../../services/cli/child-process.ts";
import { Code } from "../../services/kernel/errors.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { checkHealth } from "../../services/rpc/health-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { type FleetWorker, type RunningRouter, startRouter, stopAll } from "../router/fleet.ts";
import { generate, idsOf, textOf } from "../router/grpc-stream.ts";
import {
  colocated,
  greedy,
  promptIds,
  seeded,
  settledBlocks,
  startKvWorker,
  tinyCheckpointOf,
  workerMetric,
} from "./disagg-fleet.ts";

const MODEL = "tiny-llama";
const DEADLINE_MS = 20_000;

describe("KV transfer faults through the router (e2e)", () => {
  let redis: RedisServer;
  let dir: string;
  /** reference: computes colocated outputs; prefill / decode: the handoff; the others for the faults. */
  let reference: Served;
  let prefill: Served;
  let decode: Served;
  let decodeFail: Served;
  const workers: Served[] = [];
  const routers: RunningRouter[] = [];
  const clients: GrpcClient[] = [];
  const alive = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);

  before(async () => {
    redis = await RedisServer.start();
    dir = await tinyCheckpointOf("llama");
    [reference, prefill, decode, decodeFail] = await Promise.all([
      startKvWorker(dir, redis.url, ["--no-kv-read-through", "--no-kv-write-through"]),
      startKvWorker(dir, redis.url),
      startKvWorker(dir, redis.url),
      startKvWorker(dir, redis.url, ["--kv-policy", "fail"]),
    ]);
    workers.push(reference, prefill, decode, decodeFail);
  });

  after(async () => {
    for (const c of clients) c.close();
    await Promise.all(routers.map((r) => r.stop()));
    await stopAll(workers);
    await redis?.close();
  });

  async function routerOver(list: FleetWorker[]): Promise<GrpcClient> {
    const router = await startRouter(list, { cache: { enabled: false, coalesce: false } });
    routers.push(router);
    // /ready needs one eligible endpoint per model: wait for both sides, or the first request may find
    // only one of them and run whole on it.
    for (let i = 0; i < 100; i++) {
      const listed = (await (await fetch(`${router.httpUrl}/v1/endpoints`)).json()) as {
        data: { eligible: boolean; kv_health: string }[];
      };
      if (listed.data.every((e) => e.eligible && e.kv_health === "SERVING")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const client = new GrpcClient(router.grpcAddress);
    clients.push(client);
    return client;
  }

  async function transferServing(worker: Served): Promise<boolean> {
    for (let i = 0; i < 100; i++) {
      if ((await checkHealth(worker.address, "tessera.v1.KvTransfer")) === "SERVING") return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  it("Redis killed during the handoff: the decode worker recomputes, the output is right and in time", async () => {
    const client = await routerOver([
      { served: prefill, role: "prefill" },
      { served: decode, role: "decode" },
    ]);
    const sampled = seeded(MODEL, promptIds(22, 70), 16);
    const split = await generate(client, sampled, {}, DEADLINE_MS);
    assert.equal(split.error, undefined, split.error?.details);
    assert.equal(split.endpoint, prefill.address, "Redis up: split between prefill and decode");
    const request = greedy(MODEL, promptIds(20, 90), 40);
    const expected = await colocated(reference, request);
    const routed = await generate(client, request, {}, DEADLINE_MS, (_m, n) => {
      if (n === 1) void redis.kill();
    });
    assert.equal(routed.error, undefined, routed.error?.details);
    assert.deepEqual(idsOf(routed), expected.ids);
    assert.equal(textOf(routed), expected.text);
    const later = greedy(MODEL, promptIds(21, 70), 12);
    const withoutRedis = await generate(client, later, {}, DEADLINE_MS);
    assert.equal(withoutRedis.error, undefined, withoutRedis.error?.details);
    assert.deepEqual(idsOf(withoutRedis), (await colocated(reference, later)).ids);
    // Without a tier the router sends it whole to the decode worker (once the workers report the tier
    // down; before that, split, the decode worker recomputing): the same tokens either way.
    const fallback = await generate(client, sampled, {}, DEADLINE_MS);
    assert.equal(fallback.error, undefined, fallback.error?.details);
    const sampledReference = await colocated(reference, sampled);
    assert.ok(new Set(sampledReference.ids).size > 6, `sampled, not a greedy loop: ${sampledReference.ids}`);
    assert.deepEqual(idsOf(split), sampledReference.ids, "split between prefill and decode");
    assert.deepEqual(idsOf(fallback), sampledReference.ids, "Redis down");
    await redis.restart();
    for (const worker of [prefill, decode, decodeFail])
      assert.ok(await transferServing(worker), "the tier serves again");
    assert.deepEqual(await settledBlocks(alive()), [0, 0, 0, 0]);
  });

  it("Redis at maxmemory 2mb, evicting: no request fails, every output is right", async () => {
    const admin = new Redis(redis.url);
    try {
      await admin.config("SET", "maxmemory", "2mb");
      await admin.config("SET", "maxmemory-policy", "allkeys-lru");
      const client = await routerOver([
        { served: prefill, role: "prefill" },
        { served: decode, role: "decode" },
      ]);
      const requests = Array.from({ length: 16 }, (_, i) => greedy(MODEL, promptIds(100 + i, 200), 6));
      for (let i = 0; i < requests.length; i += 4) {
        const batch = requests.slice(i, i + 4);
        const routed = await Promise.all(batch.map((r) => generate(client, r, {}, DEADLINE_MS)));
        for (const [j, r] of routed.entries()) {
          assert.equal(r.error, undefined, r.error?.details);
          assert.deepEqual(idsOf(r), (await colocated(reference, batch[j]!)).ids);
        }
      }
      const stats = await admin.info("stats");
      const evicted = Number(/evicted_keys:(\d+)/.exec(stats)?.[1]);
      assert.ok(evicted > 0, `Redis evicted ${evicted} keys`);
    } finally {
      admin.disconnect();
    }
    assert.deepEqual(await settledBlocks(alive()), [0, 0, 0, 0]);
  });

  it("the prefill worker dies before the decode worker pulls: recompute, or a clean UNAVAILABLE with policy fail", async () => {
    // Prefill workers whose blocks never reach Redis, each killed as its token reaches the client.
    const [doomed, doomedToo] = await Promise.all([
      startKvWorker(dir, redis.url, ["--no-kv-write-through"]),
      startKvWorker(dir, redis.url, ["--no-kv-write-through"]),
    ]);
    workers.push(doomed, doomedToo);
    const kill = (worker: Served) => (_m: unknown, n: number) => {
      if (n === 1) worker.child.kill("SIGKILL");
    };

    const recompute = await routerOver([
      { served: doomed, role: "prefill" },
      { served: decode, role: "decode" },
    ]);
    const request = greedy(MODEL, promptIds(30, 100), 16);
    const misses = await workerMetric(decode, "tessera_kv_fallbacks_total", { reason: "miss" });
    const recomputed = await generate(recompute, request, {}, DEADLINE_MS, kill(doomed));
    assert.equal(recomputed.error, undefined, recomputed.error?.details);
    assert.deepEqual(idsOf(recomputed), (await colocated(reference, request)).ids);
    assert.equal(await workerMetric(decode, "tessera_kv_fallbacks_total", { reason: "miss" }), misses + 1);

    const failing = await routerOver([
      { served: doomedToo, role: "prefill" },
      { served: decodeFail, role: "decode" },
    ]);
    const refused = await generate(
      failing,
      greedy(MODEL, promptIds(31, 100), 16),
      {},
      DEADLINE_MS,
      kill(doomedToo),
    );
    assert.equal(refused.error?.code, Code.UNAVAILABLE, refused.error?.details);
    assert.match(refused.error.details, /KV blocks unavailable/, refused.error.details);
    assert.equal(idsOf(refused).length, 1, "the prefill worker's token, then the error");
    await Promise.all([doomed.exited, doomedToo.exited]);
    assert.deepEqual(await settledBlocks(alive()), [0, 0, 0, 0], "the decode workers freed their blocks");
  });
});

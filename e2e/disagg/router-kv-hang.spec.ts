// A hung Redis and a restarted worker under disaggregated serving, on real processes and a real
// redis-server (SIGSTOP: connections stay open, nothing answers). The workers' KV store deadline is
// set per worker (--kv-timeout-ms); a request pays it at most once before it falls back (the prefill
// worker that could not store its blocks goes on itself instead of handing over to a decode worker
// that would wait in turn), so the pause shows as fallbacks in the router's metrics and headers, not
// as requests stalled for two deadlines. A worker restarted while the router runs is back in its
// rotation within 2 s of serving (the router waits on the connection instead of a backoff grown
// while the worker was away).
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { checkHealth, waitUntilServing } from "../../services/rpc/health-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { metricValue, type RunningRouter, startRouter, stopAll } from "../router/fleet.ts";
import {
  colocated,
  greedy,
  promptIds,
  startKvWorker,
  tinyCheckpointOf,
  workerMetric,
} from "./disagg-fleet.ts";

const MODEL = "tiny-llama";
const KV_TIMEOUT_MS = 3_000;

/** A greedy completion of `ids` through the router's HTTP door: ids, headers and how long it took. */
async function complete(router: RunningRouter, ids: number[], maxTokens: number) {
  const started = performance.now();
  const response = await fetch(`${router.httpUrl}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      prompt: ids,
      max_tokens: maxTokens,
      temperature: 0,
      ignore_eos: true,
      logprobs: 0,
    }),
  });
  const body = (await response.json()) as {
    choices?: { logprobs?: { tokens?: string[] } }[];
    error?: unknown;
  };
  return {
    status: response.status,
    body,
    ms: performance.now() - started,
    path: response.headers.get("x-tessera-path"),
    endpoints: response.headers.get("x-tessera-endpoints"),
  };
}

async function transferServing(worker: Served): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if ((await checkHealth(worker.address, "tessera.v1.KvTransfer")) === "SERVING") return true;
    await delay(100);
  }
  return false;
}

describe("a hung Redis and a restarted worker through the router (e2e)", function () {
  this.timeout(120_000);
  let redis: RedisServer;
  let dir: string;
  let reference: Served;
  let prefill: Served;
  let decode: Served;
  let router: RunningRouter;
  const workers: Served[] = [];

  before(async () => {
    redis = await RedisServer.start();
    dir = await tinyCheckpointOf("llama");
    const timeout = ["--kv-timeout-ms", String(KV_TIMEOUT_MS)];
    [reference, prefill, decode] = await Promise.all([
      startKvWorker(dir, redis.url, ["--no-kv-read-through", "--no-kv-write-through"]),
      startKvWorker(dir, redis.url, timeout),
      startKvWorker(dir, redis.url, timeout),
    ]);
    workers.push(reference, prefill, decode);
    router = await startRouter(
      [
        { served: prefill, role: "prefill" },
        { served: decode, role: "decode" },
      ],
      { cache: { enabled: false, coalesce: false }, metricsPort: 0 },
    );
    // The router serves before its first health and KV-health checks of both workers have come back:
    // a request sent then falls back (no_decode_endpoint), so wait until its listing shows both ready.
    const ready = async () => {
      const listing = (await (await fetch(`${router.httpUrl}/v1/endpoints`)).json()) as {
        data: { health: string; kv_health: string }[];
      };
      return (
        listing.data.length === 2 &&
        listing.data.every((e) => e.health === "SERVING" && e.kv_health === "SERVING")
      );
    };
    for (const started = performance.now(); !(await ready()); await delay(100))
      if (performance.now() - started > 30_000) throw new Error("the router never saw both workers ready");
  });

  after(async () => {
    await router?.stop();
    await stopAll(workers);
    await redis?.close();
  });

  it("a 10 s pause costs a request at most one KV deadline; the fallbacks are counted and named", async () => {
    const fallbacks = () =>
      metricValue(router.metricsUrl!, "tessera_router_serving_paths_total", { path: "fallback" });
    const before = await complete(router, promptIds(40, 70), 8);
    assert.equal(before.status, 200, JSON.stringify(before.body));
    assert.equal(before.path, "disaggregated");
    assert.equal(before.endpoints, `${prefill.address}=prefill,${decode.address}=decode`);
    const fallbacksBefore = await fallbacks();

    redis.pause();
    const paused = performance.now();
    const during: Awaited<ReturnType<typeof complete>>[] = [];
    let listed: { data: { name: string; role: string; health: string; kv_health: string }[] } = { data: [] };
    try {
      for (let i = 0; performance.now() - paused < 10_000; i++) {
        const ids = promptIds(41 + i, 70);
        const routed = await complete(router, ids, 8);
        during.push(routed);
        assert.equal(routed.status, 200, JSON.stringify(routed.body));
        const expected = await colocated(reference, greedy(MODEL, ids, 8));
        assert.equal(routed.body.choices?.[0]?.logprobs?.tokens?.length, expected.ids.length);
      }
      listed = (await (await fetch(`${router.httpUrl}/v1/endpoints`)).json()) as typeof listed;
    } finally {
      redis.resume();
    }
    const stalls = during.map((r) => Math.round(r.ms));
    // Two deadlines in a row (prefill then decode) would take 2 x 3 s; one deadline and a few steps
    // of a tiny model stay well under it even on a loaded machine.
    assert.ok(Math.max(...stalls) < 2 * KV_TIMEOUT_MS - 500, `request durations ${stalls} ms`);
    assert.ok(
      during.every((r) => r.path?.startsWith("fallback:")),
      `paths during the pause: ${during.map((r) => r.path)}`,
    );
    assert.equal((await fallbacks()) - fallbacksBefore, during.length);
    assert.deepEqual(
      listed.data.map((e) => [e.name, e.role, e.health, e.kv_health]),
      [
        [prefill.address, "prefill", "SERVING", "NOT_SERVING"],
        [decode.address, "decode", "SERVING", "NOT_SERVING"],
      ],
      "the admin listing shows both workers serving without a KV tier",
    );
    const deadlines =
      (await workerMetric(prefill, "tessera_kv_transfer_failed_operations_total", {
        code: "DEADLINE_EXCEEDED",
      })) +
      (await workerMetric(decode, "tessera_kv_transfer_failed_operations_total", {
        code: "DEADLINE_EXCEEDED",
      }));
    assert.ok(deadlines <= 2, `each worker waited for the hung Redis once at most (${deadlines})`);

    for (const worker of [prefill, decode]) assert.ok(await transferServing(worker), "the tier serves again");
    let after = await complete(router, promptIds(90, 70), 8);
    for (let i = 0; i < 50 && after.path !== "disaggregated"; i++) {
      await delay(100);
      after = await complete(router, promptIds(91 + i, 70), 8);
    }
    assert.equal(after.path, "disaggregated", "disaggregated again once Redis answers");
  });

  it("a worker restarted on its address takes requests within 2 s of serving", async () => {
    const dir = await tinyCheckpointOf("llama");
    const first = await startServe(dir, ["--port", "0"]);
    workers.push(first);
    await waitUntilServing(first.address, 60_000);
    const port = first.address.split(":")[1]!;
    const solo = await startRouter([first], { cache: { enabled: false, coalesce: false } });
    try {
      assert.equal((await complete(solo, promptIds(60, 20), 2)).status, 200);
      first.child.kill("SIGKILL");
      await first.exited;
      // Down long enough for a doubling backoff to have grown past several seconds.
      await delay(12_000);
      const again = await startServe(dir, ["--port", port]);
      workers.push(again);
      const servingAt = Number(again.logs.find((l) => l["msg"] === "serving")?.["time"]);
      let answered: Awaited<ReturnType<typeof complete>> | undefined;
      while (answered?.status !== 200) {
        answered = await complete(solo, promptIds(61, 20), 2);
        if (answered.status !== 200) await delay(50);
        assert.ok(Date.now() - servingAt < 30_000, "the restarted worker never got a request");
      }
      const healthy = solo.logs.find(
        (l) =>
          l["msg"] === "endpoint health changed" && l["to"] === "SERVING" && Number(l["time"]) > servingAt,
      );
      const waitedMs = Number(healthy?.["time"]) - servingAt;
      assert.ok(waitedMs < 2_000, `the router saw the worker serving ${waitedMs} ms after it did`);
      assert.equal(answered.endpoints, `${again.address}=whole`);
    } finally {
      await solo.stop();
    }
  });
});

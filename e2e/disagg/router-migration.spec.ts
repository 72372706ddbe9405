// Request migration through the router, on real processes: a worker killed with SIGKILL in the middle
// of a stream; the router resumes the request on another worker from the tokens already streamed,
// that worker reading their KV blocks from Redis (the dying worker stored them as it filled them).
// The client's stream is the fault-free one: same ids, text, finish and usage, no token missing or
// repeated, a stop string still honoured. The requests are sampled with a seed, so the worker that takes
// over must also draw what the failed one would have drawn. Disaggregated (decode worker killed) and
// colocated workers with a Redis tier alike; afterwards the live workers' KV blocks are free again.
import assert from "node:assert/strict";
import { FinishReason } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { metricValue, type RunningRouter, startRouter, stopAll } from "../router/fleet.ts";
import { generate, idsOf, type Request, type Streamed, textOf } from "../router/grpc-stream.ts";
import {
  kvBlocksUsed,
  promptIds,
  seeded,
  settledBlocks,
  startKvWorker,
  tinyCheckpointOf,
  workerMetric,
} from "./disagg-fleet.ts";

const MODEL = "tiny-llama";
/** The client's message at which the serving worker is killed: well after blocks were stored. */
const KILL_AT = 40;

describe("request migration through the router (e2e)", () => {
  let redis: RedisServer;
  let workers: Served[];
  const routers: RunningRouter[] = [];
  const clients: GrpcClient[] = [];
  const alive = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);

  before(async () => {
    redis = await RedisServer.start();
    const dir = await tinyCheckpointOf("llama");
    workers = await Promise.all(Array.from({ length: 4 }, () => startKvWorker(dir, redis.url)));
  });

  after(async () => {
    for (const c of clients) c.close();
    await Promise.all(routers.map((r) => r.stop()));
    await stopAll(workers);
    await redis?.close();
  });

  async function routerOver(list: Parameters<typeof startRouter>[0]) {
    const router = await startRouter(list, { metricsPort: 0, cache: { enabled: false, coalesce: false } });
    routers.push(router);
    const client = new GrpcClient(router.grpcAddress);
    clients.push(client);
    return { router, client };
  }

  /**
   * Runs `request`, killing (SIGKILL) the worker `victim` names at the KILL_AT-th message; `victim` sees
   * the stream so far (its x-tessera-endpoint header names the worker serving it).
   */
  async function killedMidStream(
    client: GrpcClient,
    request: Request,
    victim: (sofar: Streamed) => Promise<Served | undefined>,
  ): Promise<{ streamed: Streamed; killed: Served | undefined }> {
    let killed: Promise<Served | undefined> = Promise.resolve(undefined);
    const streamed = await generate(client, request, {}, 30_000, (_m, n, sofar) => {
      if (n !== KILL_AT) return;
      killed = victim(sofar).then((worker) => {
        worker?.child.kill("SIGKILL");
        return worker;
      });
    });
    return { streamed, killed: await killed };
  }

  function assertSameStream(actual: Streamed, expected: Streamed): void {
    assert.equal(actual.error, undefined, actual.error?.details);
    assert.deepEqual(idsOf(actual), idsOf(expected), "the same tokens, none missing or repeated");
    assert.equal(textOf(actual), textOf(expected));
    const [last, want] = [actual.messages.at(-1), expected.messages.at(-1)];
    assert.equal(last?.finishReason, want?.finishReason);
    assert.deepEqual(last?.usage, want?.usage);
  }

  it("disaggregated: resumes on another decode worker when the decode worker is killed, stop string included", async () => {
    const [prefill, ...decoders] = workers as [Served, Served, Served, Served];
    const { router, client } = await routerOver([
      { served: prefill, role: "prefill" },
      { served: decoders[0], role: "decode" },
      { served: decoders[1], role: "decode" },
    ]);
    const ids = promptIds(1, 60);
    // A stop string first seen near token 200 (long after the kill), cut out of a fault-free run.
    const plain = await generate(client, seeded(MODEL, ids, 300));
    const text = textOf(plain);
    let at = plain.messages.slice(0, 200).reduce((n, m) => n + m.textDelta.length, 0);
    while (text.indexOf(text.slice(at, at + 6)) !== at) at++;
    const request = seeded(MODEL, ids, 300, [text.slice(at, at + 6)]);
    const faultFree = await generate(client, request);
    assert.equal(faultFree.messages.at(-1)?.finishReason, FinishReason.STOP_STRING);

    const hits = { op: "get", result: "hit" };
    const fetched = await Promise.all(
      decoders.map((d) => workerMetric(d, "tessera_kv_transfer_blocks_total", hits)),
    );
    const { streamed, killed } = await killedMidStream(client, request, async () => {
      const loads = await Promise.all(
        decoders.slice(0, 2).map(async (d) => ({ d, load: await kvBlocksUsed(d) })),
      );
      return loads.find((l) => l.load > 0)?.d;
    });
    assert.ok(killed, "a decode worker was serving the request");
    assertSameStream(streamed, faultFree);
    const survivor = decoders.slice(0, 2).find((d) => d !== killed)!;
    const read =
      (await workerMetric(survivor, "tessera_kv_transfer_blocks_total", hits)) -
      fetched[decoders.indexOf(survivor)]!;
    assert.ok(
      read >= Math.floor(ids.length / 16) + 2,
      `the survivor read ${read} blocks, generated ones included`,
    );
    assert.equal(
      await metricValue(router.metricsUrl!, "tessera_router_migrations_total", { outcome: "resumed" }),
      1,
    );
    assert.deepEqual(await settledBlocks(alive()), [0, 0, 0]);
  });

  it("colocated workers with a Redis tier: resumes on another when the serving one is killed", async () => {
    const { router, client } = await routerOver(alive().map((served) => ({ served, role: "both" as const })));
    const request = seeded(MODEL, promptIds(2, 50), 300);
    const faultFree = await generate(client, request);
    // The worker this stream is on, not the one the fault-free run was on: routing need not place the
    // second run where the first ran (once it did not: that stream ran unharmed, no migration counted).
    const { streamed, killed } = await killedMidStream(client, request, async (sofar) =>
      alive().find((w) => w.address === sofar.endpoint),
    );
    assert.ok(killed, "the serving worker was killed");
    assertSameStream(streamed, faultFree);
    assert.equal(
      await metricValue(router.metricsUrl!, "tessera_router_migrations_total", { outcome: "resumed" }),
      1,
    );
    assert.deepEqual(await settledBlocks(alive()), [0, 0]);
  });
});

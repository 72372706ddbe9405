// Disaggregated serving through the router, on real processes: for every architecture, a prefill and a
// decode worker share a real redis-server; the router sends the prompt to the prefill worker, streams
// its token at once, then streams the rest from the decode worker, which reads the prompt's KV blocks
// from Redis. The client sees one stream equal to the colocated generation (greedy, and sampled with
// a seed, token by token), with usage counting the original prompt; afterwards every worker's KV
// blocks are free again.
import assert from "node:assert/strict";
import { FinishReason } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { type RunningRouter, startRouter, stopAll } from "../router/fleet.ts";
import { generate, idsOf, textOf } from "../router/grpc-stream.ts";
import {
  ARCHITECTURES,
  colocated,
  greedy,
  promptIds,
  seeded,
  settledBlocks,
  startKvWorker,
  tinyCheckpointOf,
  workerMetric,
} from "./disagg-fleet.ts";

describe("disaggregated prefill/decode through the router (e2e)", () => {
  let redis: RedisServer;
  const prefill = new Map<string, Served>();
  const decode = new Map<string, Served>();
  let router: RunningRouter;
  let client: GrpcClient;

  before(async () => {
    redis = await RedisServer.start();
    const dirs = await Promise.all(ARCHITECTURES.map(tinyCheckpointOf));
    const started = await Promise.all(
      dirs.flatMap((dir) => [startKvWorker(dir, redis.url), startKvWorker(dir, redis.url)]),
    );
    ARCHITECTURES.forEach((arch, i) => {
      prefill.set(arch, started[2 * i]!);
      decode.set(arch, started[2 * i + 1]!);
    });
    router = await startRouter(
      ARCHITECTURES.flatMap((arch) => [
        { served: prefill.get(arch)!, role: "prefill" as const },
        { served: decode.get(arch)!, role: "decode" as const },
      ]),
      {
        models: await Promise.all(
          ARCHITECTURES.map(async (arch) => ({
            id: `tiny-${arch}`,
            tokenizer: await tinyCheckpointOf(arch),
          })),
        ),
        cache: { enabled: false, coalesce: false },
      },
    );
    client = new GrpcClient(router.grpcAddress);
  });

  after(async () => {
    client?.close();
    await router?.stop();
    await stopAll([...prefill.values(), ...decode.values()]);
    await redis?.close();
  });

  for (const [i, arch] of ARCHITECTURES.entries()) {
    it(`${arch}: streams what a colocated worker generates, the decode side reading the prompt's KV from Redis`, async () => {
      const model = `tiny-${arch}`;
      const ids = promptIds(10 + i, 75);
      const request = greedy(model, ids, 20);
      const decoder = decode.get(arch)!;
      const hits = { op: "get", result: "hit" };
      const fetchedBefore = await workerMetric(decoder, "tessera_kv_transfer_blocks_total", hits);
      const routed = await generate(client, request);
      assert.equal(routed.error, undefined, routed.error?.details);
      const fetched = (await workerMetric(decoder, "tessera_kv_transfer_blocks_total", hits)) - fetchedBefore;
      assert.ok(
        fetched >= Math.floor(ids.length / 16),
        `the decode worker read ${fetched} blocks from Redis`,
      );

      const reference = await colocated(prefill.get(arch)!, request);
      assert.deepEqual(idsOf(routed), reference.ids);
      assert.equal(textOf(routed), reference.text);
      const logprobs = routed.messages.flatMap((m) => m.tokens.map((t) => t.logprob));
      for (const [j, lp] of logprobs.entries())
        assert.ok(
          Math.abs(lp - reference.logprobs[j]!) < 1e-3,
          `token ${j}: ${lp} vs ${reference.logprobs[j]}`,
        );
      assert.ok(routed.messages.every((m) => m.tokens.every((t) => t.topLogprobs.length === 2)));
      const last = routed.messages.at(-1)!;
      assert.equal(last.finishReason, FinishReason.LENGTH);
      assert.deepEqual(
        { prompt: last.usage?.promptTokens, completion: last.usage?.completionTokens },
        { prompt: ids.length, completion: 20 },
      );
      assert.equal(
        routed.endpoint,
        prefill.get(arch)!.address,
        "the first token came from the prefill worker",
      );
      assert.deepEqual(await settledBlocks([prefill.get(arch)!, decoder]), [0, 0]);
    });

    it(`${arch}: samples what a colocated worker samples for the same seed, token by token`, async () => {
      // The prefill worker draws the first token, the decode worker the rest: each draw is keyed by
      // the seed and the token's position, not by how many draws that worker made before.
      const request = seeded(`tiny-${arch}`, promptIds(40 + i, 50), 24);
      const routed = await generate(client, request);
      assert.equal(routed.error, undefined, routed.error?.details);
      assert.equal(routed.endpoint, prefill.get(arch)!.address, "split between prefill and decode");
      const reference = await colocated(decode.get(arch)!, request);
      assert.ok(new Set(reference.ids).size > 8, `sampled, not a greedy loop: ${reference.ids}`);
      assert.deepEqual(idsOf(routed), reference.ids);
      assert.equal(textOf(routed), reference.text);
    });
  }
});

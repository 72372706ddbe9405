// `npm run bench -- disagg`: disaggregated prefill/decode through a real redis-server on the `base`
// preset (issue 7), every ratio in this one run:
//   a. KV handoff time (the prefill worker storing the prompt's blocks after its first token, plus the
//      decode worker fetching and importing them) vs the decode worker's own prefill of that prompt,
//      for prompts of 128, 512 and 1,024 tokens;
//   b. the block store's SET/GET throughput (16 bulk connections; GET is readBlocks, the read path
//      the engine uses) vs raw Redis SET/GET of values of the same size at its best: redis-benchmark
//      and ioredis with 16 connections and 4 commands pipelined on each (and one ioredis pipeline on
//      one connection, for reference), every value SET then GET 10 times (redis-benchmark's
//      -n 960 -r 96); the check takes the best of them;
//   c. decode inter-token latency p99 under a mixed workload (long prompts arriving while others
//      decode), disaggregated (one prefill + one decode engine) vs colocated (two engines).
// Engines run in this process, each with its own model thread and one onnxruntime thread, so both
// setups use the same two cores and the same number of workers.
import fs from "node:fs";
import path from "node:path";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import { greedySampling } from "../../services/inference/sampling-params.ts";
import type { GenerateEvent, SamplingParams } from "../../services/inference/types.ts";
import { Engine } from "../../services/worker/engine/engine.ts";
import { encodeKvBlock } from "../../services/worker/kv-transfer/kv-block-codec.ts";
import { testBlocks } from "../../services/worker/kv-transfer/kv-test-blocks.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { parseRedisKvConfig } from "../../services/worker/kv-transfer/redis-kv-config.ts";
import { RedisKvStore } from "../../services/worker/kv-transfer/redis-kv-store.ts";
import { RedisKvTier } from "../../services/worker/kv-transfer/redis-kv-tier.ts";
import {
  measureRawRedis,
  measureRedisBenchmark,
  measureStore,
  type Throughput,
} from "../../services/worker/kv-transfer/redis-throughput.ts";
import { describeCheckpoint } from "../../services/worker/model/checkpoint.ts";
import { check, writeResult } from "../report.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/llama-base");
const GREEDY: SamplingParams = greedySampling({ maxTokens: 1, ignoreEos: true });

let seed = 777;
function randomIds(n: number): number[] {
  return Array.from({ length: n }, () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return 3 + (seed % 2400);
  });
}

interface Timed {
  ids: number[];
  start: number;
  firstToken: number;
  end: number;
  gaps: number[];
}

async function timed(stream: AsyncIterable<GenerateEvent>): Promise<Timed> {
  const t: Timed = { ids: [], start: performance.now(), firstToken: 0, end: 0, gaps: [] };
  let last = 0;
  for await (const e of stream) {
    const now = performance.now();
    if (e.type === "tokens") {
      if (t.ids.length === 0) t.firstToken = now;
      else t.gaps.push(now - last);
      last = now;
      t.ids.push(...e.tokens.map((x) => x.tokenId));
    }
  }
  t.end = performance.now();
  return t;
}

let n = 0;
const gen = (
  engine: Engine,
  promptIds: number[],
  maxTokens: number,
  kv?: { expectedRemoteBlocks?: number; awaitWrites?: boolean },
) =>
  timed(
    engine.generate({
      requestId: `d${n++}`,
      promptIds,
      sampling: { ...GREEDY, maxTokens },
      ...(kv && { kv }),
    }),
  );

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const median = (xs: number[]) => percentile(xs, 0.5);

/** Decode-heavy requests stream while long prompts keep arriving; returns every decode gap (ms). */
async function mixedWorkload(
  route: (prompt: number[], maxTokens: number, i: number) => Promise<Timed>,
): Promise<number[]> {
  const decoders = Array.from({ length: 6 }, (_, i) => route(randomIds(32), 96, i));
  const long: Promise<Timed>[] = [];
  for (let i = 0; i < 6; i++) {
    await new Promise((r) => setTimeout(r, 400));
    long.push(route(randomIds(512), 8, i));
  }
  const done = await Promise.all(decoders);
  await Promise.all(long);
  return done.flatMap((t) => t.gaps);
}

export async function run(): Promise<void> {
  if (!fs.existsSync(path.join(MODEL_DIR, "config.json"))) {
    await createCheckpoint({ arch: "llama", preset: "base", seed: 1, out: MODEL_DIR });
  }
  const redis = await RedisServer.start();
  const figures: Record<string, unknown> = {};
  const checkpoint = describeCheckpoint(MODEL_DIR);
  const openStore = async () => {
    const store = new RedisKvStore({
      // The store moves blocks over as many connections as raw Redis is measured with (b).
      config: parseRedisKvConfig({ url: redis.url, connections: 16 }).value!,
      format: {
        modelId: path.basename(MODEL_DIR),
        revision: checkpoint.revision,
        layerRange: { start: 0, end: checkpoint.config.numLayers },
        shape: { blockSize: 16, kvHeads: checkpoint.config.numKvHeads, headDim: checkpoint.config.headDim },
      },
    });
    await store.start();
    return store;
  };
  const stores = [await openStore(), await openStore()];
  const remote = (i: number) => ({
    remoteKv: {
      tier: new RedisKvTier(stores[i]!),
      policy: "recompute" as const,
      readThrough: true,
      writeThrough: true,
    },
  });
  // The prefill worker computes prompts in 128-token chunks: each chunk's blocks are stored while the
  // next chunk computes, so only the last chunk's store is left when the first token is out.
  const prefill = await Engine.load(MODEL_DIR, {
    threads: 1,
    engine: { maxNumBatchedTokens: 128 },
    ...remote(0),
  });
  const decode = await Engine.load(MODEL_DIR, { threads: 1, ...remote(1) });
  const colocated = await Engine.load(MODEL_DIR, { threads: 1 });
  try {
    // a. Handoff vs the decode worker's own prefill.
    const handoff: Record<
      string,
      { handoffMs: number; storeMs: number; fetchMs: number; localPrefillMs: number }
    > = {};
    for (const length of [128, 512, 1024]) {
      const handoffs: number[] = [];
      const storeTimes: number[] = [];
      const fetchTimes: number[] = [];
      const locals: number[] = [];
      for (let round = 0; round < 3; round++) {
        const prompt = randomIds(length);
        const local = await gen(colocated, prompt, 1);
        const p = await gen(prefill, prompt, 1, { awaitWrites: true });
        const handoffPrompt = [...prompt, p.ids[0]!];
        const blocks = Math.floor((handoffPrompt.length - 1) / 16);
        await gen(decode, handoffPrompt, 1, { expectedRemoteBlocks: blocks });
        storeTimes.push(p.end - p.firstToken);
        fetchTimes.push(decode.remote!.stats.lastFetchMs);
        handoffs.push(p.end - p.firstToken + decode.remote!.stats.lastFetchMs);
        locals.push(local.firstToken - local.start);
      }
      handoff[String(length)] = {
        handoffMs: median(handoffs),
        storeMs: median(storeTimes),
        fetchMs: median(fetchTimes),
        localPrefillMs: median(locals),
      };
    }
    figures["handoff"] = handoff;

    // b. Store vs raw Redis at its best for base-sized blocks (384 KiB values).
    const blocks = testBlocks(stores[0]!.format, 96);
    const valueBytes = encodeKvBlock({ ...stores[0]!.format, ...blocks[0]! }).length;
    // Every figure SETs then GETs each of the 96 values 10 times (redis-benchmark's -n is 10 x -r):
    // one round of fresh keys alone would time Redis' first touch of the values' memory.
    const rounds = 10;
    const tuned = { connections: 16, pipeline: 4, rounds };
    const rawRedis = {
      redisBenchmark: await measureRedisBenchmark(redis.url, valueBytes, blocks.length, tuned),
      ioredis16x4: await measureRawRedis(redis.url, valueBytes, blocks.length, tuned),
      ioredisOnePipeline: await measureRawRedis(redis.url, valueBytes, blocks.length, { rounds }),
    };
    const raw: Throughput = {
      setBytesPerS: Math.max(...Object.values(rawRedis).map((t) => t.setBytesPerS)),
      getBytesPerS: Math.max(...Object.values(rawRedis).map((t) => t.getBytesPerS)),
    };
    const store = await measureStore(stores[0]!, blocks, rounds);
    figures["rawRedis"] = { ...rawRedis, best: raw };
    figures["store"] = store;

    // c. Mixed workload: ITL p99, disaggregated vs colocated with the same two engines' worth of CPU.
    const colocated2 = await Engine.load(MODEL_DIR, { threads: 1 });
    const colocatedGaps = await mixedWorkload((prompt, maxTokens, i) =>
      gen(i % 2 ? colocated : colocated2, prompt, maxTokens),
    );
    await colocated2.close();
    const disaggGaps = await mixedWorkload(async (prompt, maxTokens) => {
      const first = await gen(prefill, prompt, 1, { awaitWrites: true });
      const rest = await gen(decode, [...prompt, first.ids[0]!], maxTokens - 1, {
        expectedRemoteBlocks: Math.floor(prompt.length / 16),
      });
      return { ...rest, ids: [first.ids[0]!, ...rest.ids] };
    });
    figures["itlColocatedMs"] = {
      p50: median(colocatedGaps),
      p99: percentile(colocatedGaps, 0.99),
      n: colocatedGaps.length,
    };
    figures["itlDisaggregatedMs"] = {
      p50: median(disaggGaps),
      p99: percentile(disaggGaps, 0.99),
      n: disaggGaps.length,
    };

    const ratios = Object.values(handoff).map((h) => h.handoffMs / h.localPrefillMs);
    writeResult({
      suite: "disagg",
      description:
        "Disaggregated prefill/decode on the base preset (llama, 88M params) through a real redis-server: handoff (the prefill worker's store left after its first token + the decode worker's fetch and import) vs the decode worker's own prefill, median of 3 prompts per length, for 128/512/1,024-token prompts; block store (16 bulk connections, GET through readBlocks) vs the best raw Redis SET/GET (redis-benchmark or ioredis, 16 connections x 4 pipelined, or one ioredis pipeline) for 96 blocks of 384 KiB, each SET then GET 10 times; decode ITL p99 with 6 streaming requests while six 512-token prompts arrive, one prefill + one decode engine vs two colocated engines (one onnxruntime thread each)",
      figures,
      checks: [
        check("KV handoff / local prefill, worst of 128-1024-token prompts", Math.max(...ratios), "<=", 0.2),
        check("store SET throughput / best raw Redis SET", store.setBytesPerS / raw.setBytesPerS, ">=", 0.5),
        check("store GET throughput / best raw Redis GET", store.getBytesPerS / raw.getBytesPerS, ">=", 0.5),
        check(
          "decode ITL p99 disaggregated / colocated",
          percentile(disaggGaps, 0.99) / percentile(colocatedGaps, 0.99),
          "<=",
          0.8,
        ),
      ],
    });
  } finally {
    await Promise.all([prefill.close(), decode.close(), colocated.close()]);
    for (const s of stores) await s.close();
    await redis.close();
  }
}

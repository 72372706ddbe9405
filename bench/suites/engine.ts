// `npm run bench -- engine`: the serving engine on the `base` preset (≈88M parameters, fp32), with
// every ratio measured in this one run (issue 3):
//   a. batch-1 decode through the engine vs a bare loop calling the same onnxruntime session;
//   b. 16 concurrent requests vs the same 16 one at a time; 32-way continuous batching vs static
//      batches of 32 (each batch runs until its longest request ends) on exponential output lengths;
//   c. time to first token with a 1,000-token prefix cached vs cold;
//   d. batch-1 decode vs the memory-bandwidth bound (read bandwidth ÷ weight bytes per token);
//   f. the resident set of a real `tessera serve` after load and after each of 10 rounds of 64
//      concurrent gRPC streams (a third cancelled mid-stream) against the weights it holds plus its KV
//      pool, as its "model loaded" log line reports them (issue 18; memory/serve-rounds.ts);
//   g. the per-token cost of structured output (json_schema) at 16 concurrent vs unconstrained
//      (issue 19; structured-cost.ts).
// `npm run bench -- engine memory [serve flags]` runs section f alone and prints its figures and checks,
// writing no result (to iterate on the server's memory); `npm run bench -- engine structured` does so for section g.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as ort from "onnxruntime-node";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import { greedySampling } from "../../services/inference/sampling-params.ts";
import type { GenerateEvent, SamplingParams } from "../../services/inference/types.ts";
import { Engine } from "../../services/worker/engine/engine.ts";
import { GraphBuilder } from "../../services/worker/graph/onnx-builder.ts";
import { wholeModel } from "../../services/worker/graph/shard-graph.ts";
import { describeCheckpoint } from "../../services/worker/model/checkpoint.ts";
import { WeightStore } from "../../services/worker/model/weights.ts";
import { BACKENDS } from "../../services/worker/runtime/attention-selection.ts";
import { allocateShardPool, ShardExecutor } from "../../services/worker/runtime/shard-executor.ts";
import { check, writeResult } from "../report.ts";
import { type ServeRounds, serveRounds } from "./memory/serve-rounds.ts";
import { samplerSpeed } from "./sampler-speed.ts";
import { structuredCost } from "./structured-cost.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/llama-base");
const GREEDY: SamplingParams = greedySampling({ maxTokens: 64, ignoreEos: true });

let seed = 20261122;
function rand(): number {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
}
const randomIds = (n: number, vocab = 2500) =>
  Array.from({ length: n }, () => 3 + Math.floor(rand() * (vocab - 3)));

interface Timing {
  tokens: number;
  first: number;
  last: number;
  start: number;
}

async function timed(stream: AsyncIterable<GenerateEvent>): Promise<Timing> {
  const t: Timing = { tokens: 0, first: 0, last: 0, start: performance.now() };
  for await (const e of stream) {
    if (e.type !== "tokens") continue;
    const now = performance.now();
    if (t.tokens === 0) t.first = now;
    t.last = now;
    t.tokens += e.tokens.length;
  }
  return t;
}

let nextId = 0;
const generate = (engine: Engine, promptIds: number[], maxTokens: number) =>
  timed(engine.generate({ requestId: `bench-${nextId++}`, promptIds, sampling: { ...GREEDY, maxTokens } }));

async function throughput(
  engine: Engine,
  prompts: number[][],
  lengths: number[],
  concurrent: boolean,
): Promise<number> {
  const t0 = performance.now();
  let tokens = 0;
  if (concurrent) {
    const all = await Promise.all(prompts.map((p, i) => generate(engine, p, lengths[i]!)));
    tokens = all.reduce((n, t) => n + t.tokens, 0);
  } else {
    for (const [i, p] of prompts.entries()) tokens += (await generate(engine, p, lengths[i]!)).tokens;
  }
  return tokens / ((performance.now() - t0) / 1000);
}

/**
 * Static batching as classic batch generation does it: a batch of `size` starts together, every
 * member keeps computing until the batch's longest output is done (finished rows are padding), and
 * the next batch starts after. Only each request's own tokens count as useful output.
 */
async function staticBatches(
  engine: Engine,
  prompts: number[][],
  lengths: number[],
  size: number,
): Promise<number> {
  const t0 = performance.now();
  let useful = 0;
  for (let i = 0; i < prompts.length; i += size) {
    const wanted = lengths.slice(i, i + size);
    const longest = Math.max(...wanted);
    await Promise.all(prompts.slice(i, i + size).map((p) => generate(engine, p, longest)));
    useful += wanted.reduce((a, b) => a + b, 0);
  }
  return useful / ((performance.now() - t0) / 1000);
}

/**
 * Bare loop: the same graph and backend in the executor the model thread runs (the whole model, a
 * group of one), called step after step on this thread with greedy argmax: no engine, no thread hop.
 */
async function bareExecutor(backendName: string, maxTokens: number): Promise<ShardExecutor> {
  const checkpoint = describeCheckpoint(MODEL_DIR);
  const spec = wholeModel(checkpoint.config.numLayers);
  const pool = allocateShardPool(checkpoint.config, spec, Math.ceil(maxTokens / 16), 16);
  const options = { blockSize: 16, threads: 0, alone: true };
  const backend = BACKENDS.find((b) => b.name === backendName)!;
  return ShardExecutor.create(checkpoint, WeightStore.open(MODEL_DIR), backend, spec, pool, options);
}

async function bareDecode(executor: ShardExecutor, promptLength: number, steps: number): Promise<number> {
  const table = Array.from({ length: Math.ceil((promptLength + steps + 1) / 16) }, (_, i) => i);
  let logits = await executor.run(
    [{ numPast: 0, numNew: promptLength, blockTable: table, needsLogits: true }],
    { tokens: Int32Array.from(randomIds(promptLength)) },
  );
  const t0 = performance.now();
  for (let s = 0; s < steps; s++) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    logits = await executor.run(
      [{ numPast: promptLength + s, numNew: 1, blockTable: table, needsLogits: true }],
      { tokens: Int32Array.of(best) },
    );
  }
  return steps / ((performance.now() - t0) / 1000);
}

/**
 * Memory read bandwidth: the fastest of two streaming reads of a 512 MiB input (passed without a copy)
 * in onnxruntime with the engine's thread count, best of 5 each: a row-wise ReduceMax and a
 * matrix-vector product [1,K] x [K,N] (the access pattern of batch-1 decode). The faster one is the
 * tightest bound.
 */
async function readBandwidth(): Promise<{ reduceMax: number; gemv: number }> {
  const data = new Float32Array(128 * 1024 * 1024).fill(1);
  const K = 8192;
  const N = data.length / K;
  const reduce = new GraphBuilder();
  const x = reduce.input("x", "float", [N, K]);
  reduce.output(reduce.op("ReduceMax", [x], { axes: [1], keepdims: 0 }), "y", "float", [N]);
  const gemv = new GraphBuilder();
  const a = gemv.input("a", "float", [1, K]);
  const b = gemv.input("b", "float", [K, N]);
  gemv.output(gemv.op("MatMul", [a, b]), "y", "float", [1, N]);
  const best = async (graph: GraphBuilder, feeds: Record<string, ort.Tensor>) => {
    const session = await ort.InferenceSession.create(graph.toBytes("bandwidth"));
    await session.run(feeds);
    let ms = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await session.run(feeds);
      ms = Math.min(ms, performance.now() - t0);
    }
    await session.release();
    return data.byteLength / (ms / 1000);
  };
  return {
    reduceMax: await best(reduce, { x: new ort.Tensor("float32", data, [N, K]) }),
    gemv: await best(gemv, {
      a: new ort.Tensor("float32", new Float32Array(K).fill(1), [1, K]),
      b: new ort.Tensor("float32", data, [K, N]),
    }),
  };
}

/** Bytes of weights a decode step reads per token: everything but the embedding table (one row is read). */
function weightBytesPerToken(): number {
  const checkpoint = describeCheckpoint(MODEL_DIR);
  const weights = WeightStore.open(MODEL_DIR);
  const names = checkpoint.architecture.weightNames(checkpoint.config);
  let elements = 0;
  for (const n of weights.names()) {
    if (n === names.embed && names.lmHead !== names.embed) continue;
    elements += weights.shape(n).reduce((a, b) => a * b, 1);
  }
  return elements * 4;
}

const MiB = 2 ** 20;
const SERVE_ROUNDS = 10;

const inMiB = <T extends object>(o: T) =>
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => x / MiB) : (v as number) / MiB]),
  );

/** The resident-set figures and checks of section f. */
function serveMemory(r: ServeRounds) {
  const expected = r.weightBytes + r.kvPoolBytes;
  const last = r.afterRounds.at(-1)!;
  const last5 = r.afterRounds.slice(-5).map((m) => m.rss);
  const spread = (Math.max(...last5) - Math.min(...last5)) / Math.min(...last5);
  const figures = {
    weightsHeldMiB: r.weightBytes / MiB,
    kvPoolMiB: r.kvPoolBytes / MiB,
    residentAfterLoadMiB: r.afterLoad.rss / MiB,
    residentAfterRoundsMiB: r.afterRounds.map((m) => m.rss / MiB),
    anonymousAfterRoundsMiB: r.afterRounds.map((m) => m.rssAnon / MiB),
    fileBackedAfterRoundsMiB: r.afterRounds.map((m) => m.rssFile / MiB),
    afterLoadOverWeightsAndKv: r.afterLoad.rss / expected,
    afterRoundsOverWeightsAndKv: last.rss / expected,
    // Where the resident set lies (memory/smaps.ts); what lies beyond weights + KV pool is in
    // otherAnonymous (with them), the V8 heaps (after the rounds only) and the other kinds.
    breakdownAfterLoadMiB: inMiB(r.breakdownAfterLoad),
    breakdownAfterRoundsMiB: inMiB(r.breakdownAfterRounds),
    otherAnonymousBeyondWeightsKvAndV8MiB:
      (r.breakdownAfterRounds.otherAnonymous -
        expected -
        r.breakdownAfterRounds.v8Heaps.reduce((a, b) => a + b, 0)) /
      MiB,
    spreadOverLast5Rounds: spread,
    streamsFinishedPerRound: r.finished,
    streamsCancelledPerRound: r.cancelled,
    roundSeconds: r.roundSeconds,
  };
  const checks = [
    check(
      "serve resident after load / (weights held + KV pool)",
      figures.afterLoadOverWeightsAndKv,
      "<=",
      1.3,
    ),
    check(
      `serve resident after ${r.afterRounds.length} rounds of 64 streams / (weights held + KV pool)`,
      figures.afterRoundsOverWeightsAndKv,
      "<=",
      1.3,
    ),
    check("serve resident spread over the last 5 rounds", spread, "<=", 0.02),
  ];
  return { figures, checks };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(args: string[] = []): Promise<void> {
  if (!fs.existsSync(path.join(MODEL_DIR, "config.json"))) {
    await createCheckpoint({ arch: "llama", preset: "base", seed: 1, out: MODEL_DIR });
  }
  if (args[0] === "memory") {
    // Flags after `memory` go to `tessera serve` (e.g. --attention onnx-ops, to compare like with like).
    const memory = serveMemory(
      await serveRounds(MODEL_DIR, { rounds: SERVE_ROUNDS, streams: 64, args: args.slice(1) }),
    );
    console.log(JSON.stringify(memory, null, 2));
    return;
  }
  if (args[0] === "structured") {
    const engine = await Engine.load(MODEL_DIR, { engine: { maxNumSeqs: 32 } });
    const structured = await structuredCost(
      engine,
      Array.from({ length: 16 }, () => randomIds(32)),
    );
    await engine.close();
    const checks = [check("structured output per-token cost at 16 concurrent", structured.ratio, "<=", 1.1)];
    console.log(JSON.stringify({ attention: engine.attention, structured, checks }, null, 2));
    return;
  }
  // Other work on the machine slows the speed sections (not the memory one): say how much there was.
  const figures: Record<string, unknown> = { loadAverageAtStart: os.loadavg() };
  const engine = await Engine.load(MODEL_DIR, { engine: { maxNumSeqs: 32 } });
  figures["attention"] = engine.attention;
  figures["kvCacheBlocks"] = engine.pool.numBlocks;

  // a. Engine overhead at batch 1 (decode only: first token to last) against the bare loop, in
  // alternating rounds so both see the same machine; the best round of each counts.
  const bareRunner = await bareExecutor(engine.attention.backend, 256);
  const engineRounds: number[] = [];
  const bareRounds: number[] = [];
  for (let round = 0; round < 3; round++) {
    const single = await generate(engine, randomIds(32), 129);
    engineRounds.push((single.tokens - 1) / ((single.last - single.first) / 1000));
    bareRounds.push(await bareDecode(bareRunner, 32, 128));
  }
  await bareRunner.release();
  const engineDecode = Math.max(...engineRounds);
  const bare = Math.max(...bareRounds);
  figures["engineBatch1DecodeTokPerS"] = engineRounds;
  figures["bareLoopBatch1DecodeTokPerS"] = bareRounds;

  // b. Continuous batching.
  const prompts16 = Array.from({ length: 16 }, () => randomIds(32));
  const lengths16 = prompts16.map(() => 64);
  const oneAtATime = await throughput(engine, prompts16, lengths16, false);
  const concurrent16 = await throughput(engine, prompts16, lengths16, true);
  figures["oneAtATimeTokPerS"] = oneAtATime;
  figures["concurrent16TokPerS"] = concurrent16;
  const prompts64 = Array.from({ length: 64 }, () => randomIds(32));
  const expLengths = prompts64.map(() => Math.min(320, Math.max(8, Math.round(-64 * Math.log(1 - rand())))));
  figures["exponentialLengths"] = {
    mean: expLengths.reduce((a, b) => a + b, 0) / expLengths.length,
    max: Math.max(...expLengths),
  };
  const staticRounds: number[] = [];
  const continuousRounds: number[] = [];
  for (let round = 0; round < 2; round++) {
    staticRounds.push(await staticBatches(engine, prompts64, expLengths, 32));
    continuousRounds.push(await throughput(engine, prompts64, expLengths, true));
  }
  const staticTokPerS = Math.max(...staticRounds);
  const continuousTokPerS = Math.max(...continuousRounds);
  figures["static32TokPerS"] = staticRounds;
  figures["continuous32TokPerS"] = continuousRounds;

  // c. Prefix cache: TTFT of a 1,000-token prefix + 16-token question, cached vs cold.
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < 3; i++) {
    const c = await generate(engine, [...randomIds(1000), ...randomIds(16)], 1);
    cold.push(c.first - c.start);
    const prefix = randomIds(1000);
    await generate(engine, [...prefix, ...randomIds(16)], 1);
    const w = await generate(engine, [...prefix, ...randomIds(16)], 1);
    warm.push(w.first - w.start);
  }
  figures["prefixColdTtftMs"] = cold;
  figures["prefixWarmTtftMs"] = warm;

  // g. Structured output's per-token cost at 16 concurrent.
  const structured = await structuredCost(engine, prompts16);
  figures["structuredOutput16"] = structured;
  await engine.close();

  // d. Memory-bandwidth bound.
  const reads = await readBandwidth();
  const bandwidth = Math.max(reads.reduceMax, reads.gemv);
  const bytesPerToken = weightBytesPerToken();
  const bound = bandwidth / bytesPerToken;
  figures["readBandwidthGBps"] = {
    reduceMax: reads.reduceMax / 1e9,
    gemv: reads.gemv / 1e9,
    used: bandwidth / 1e9,
  };
  figures["weightBytesPerToken"] = bytesPerToken;
  figures["bandwidthBoundTokPerS"] = bound;

  // e. The sampler alone, per row at a 152k vocabulary.
  figures["samplerMsPerRowVocab152k"] = samplerSpeed();

  // f. Resident memory of `tessera serve` under load, in a process of its own.
  const memory = serveMemory(await serveRounds(MODEL_DIR, { rounds: SERVE_ROUNDS, streams: 64 }));
  figures["serveMemory"] = memory.figures;
  figures["loadAverageAtEnd"] = os.loadavg();

  writeResult({
    suite: "engine",
    description:
      'Engine on the base preset (llama, 88M params, fp32, 2 threads): batch-1 decode vs a bare onnxruntime loop (best of 3 alternating rounds); 16 concurrent vs one at a time (32-token prompts, 64 tokens each); 64 requests with exponential output lengths (mean 64) continuously batched 32-wide vs static batches of 32 that run to their longest member (best of 2 alternating rounds); TTFT with a cached 1,000-token prefix vs cold (median of 3); batch-1 decode vs read bandwidth (fastest streaming read in onnxruntime) ÷ weight bytes per token; the sampler alone per row at a 151,936-token vocabulary by setting (best of 5 rounds of 50); the resident set (VmRSS) of a `tessera serve` child process after load and after each of 10 rounds of 64 concurrent gRPC Generate streams (prompts of 8-256 tokens, 16-160 tokens out, temperature 0.8, a third cancelled after 1-12 tokens; read 1 s after each round) ÷ the weights its graph holds + its KV pool (from its "model loaded" log line), and its spread over the last 5 rounds, with where the resident set lies after load and after the last round (/proc smaps by kind of mapping: files, malloc heaps, V8 reserved ranges, stacks, other anonymous memory; the V8 heaps from a diagnostic report of the server); per-token wall time of 16 concurrent greedy requests (64 tokens each) constrained by a json_schema that cannot end within them vs the same 16 unconstrained (best of 3 alternating rounds, grammar compiled before)',
    figures,
    checks: [
      check("engine batch-1 decode / bare loop", engineDecode / bare, ">=", 0.9),
      check("16 concurrent / one at a time (tokens/s)", concurrent16 / oneAtATime, ">=", 3),
      check(
        "32 continuous / static batching, exponential lengths (tokens/s)",
        continuousTokPerS / staticTokPerS,
        ">=",
        1.5,
      ),
      check("TTFT with 1,000-token prefix cached / cold", median(warm) / median(cold), "<=", 0.3),
      check("batch-1 decode / bandwidth bound", engineDecode / bound, ">=", 0.6),
      ...memory.checks,
      check("structured output per-token cost at 16 concurrent", structured.ratio, "<=", 1.1),
    ],
  });
}

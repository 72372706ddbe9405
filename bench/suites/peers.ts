// `npm run bench -- peers`: Tessera against llama.cpp (node-llama-cpp's prebuilt CPU binaries) on the
// same weights, the `base` preset (llama, ≈88M parameters), issue 18:
//   - the checkpoint converted by our own HF->GGUF writer (devtools/gguf/) at F32, Q8_0 and Q4_0;
//     Tessera at fp32 and int8/int4 (--quantization; through the engine API in this process where
//     this checkout's serve lacks the flag: figures.tessera.<width>.how says which);
//   - the same 128-token prompts as token ids, greedy, 64 output tokens, the same thread count;
//   - per width: TTFT and batch-1 decode (median of ROUNDS requests) and the throughput of 16
//     concurrent requests (median of ROUNDS rounds), engines alternating within each round;
//   - llama.cpp's F32 greedy ids against Tessera's fp32 ids, equal but at near-ties.
// The load average before and after is recorded: on a shared machine it explains the spread.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { convertHfToGguf, type GgufWeightType } from "../../devtools/gguf/hf-to-gguf.ts";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import { quantizationLabel } from "../../services/worker/model/quantize-blocks.ts";
import { defaultQuantization } from "../../services/worker/server/serve-quantization-flags.ts";
import { type Check, check, writeResult } from "../report.ts";
import { llamaCppF32KvIds, startLlamaCpp } from "./peers/llama-cpp-peer.ts";
import type { Peer, SingleRun } from "./peers/peer.ts";
import { startTessera, type Width } from "./peers/tessera-peer.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/llama-base");
const GGUF_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/gguf");
const THREADS = 2;
const PROMPT = 128;
const OUTPUT = 64;
const CONCURRENT = 16;
const ROUNDS = 5;
/** Greedy-equality prompts. */
const EQUALITY_PROMPTS = 3;
/** A divergence is a near-tie when Tessera's top-2 logits (= logprobs) are this close, in nats. */
const NEAR_TIE = 1e-2;

const WIDTHS: [Width, GgufWeightType][] = [
  ["fp32", "F32"],
  ["int8", "Q8_0"],
  ["int4", "Q4_0"],
];

let seed = 20261127;
const randomIds = (n: number) =>
  Array.from({ length: n }, () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return 3 + (seed % 2000);
  });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Measured {
  how: string;
  ttftMs: number[];
  decodeTokPerS: number[];
  concurrentTokPerS: number[];
}

/** Warm-up, then ROUNDS rounds, each: one request and 16 at once on every peer, in turn. */
async function measure(peers: Peer[]): Promise<Measured[]> {
  for (const p of peers) {
    await p.single(randomIds(PROMPT), 8);
    await p.concurrent(
      Array.from({ length: CONCURRENT }, () => randomIds(PROMPT)),
      8,
    );
  }
  const out: Measured[] = peers.map((p) => ({
    how: p.how,
    ttftMs: [],
    decodeTokPerS: [],
    concurrentTokPerS: [],
  }));
  for (let round = 0; round < ROUNDS; round++) {
    // The same prompts for every peer; which goes first alternates between rounds.
    const prompt = randomIds(PROMPT);
    const prompts = Array.from({ length: CONCURRENT }, () => randomIds(PROMPT));
    const order = round % 2 === 0 ? peers.map((_, i) => i) : peers.map((_, i) => peers.length - 1 - i);
    for (const i of order) {
      const s = await peers[i]!.single(prompt, OUTPUT);
      out[i]!.ttftMs.push(s.ttftMs);
      out[i]!.decodeTokPerS.push(s.decodeTokPerS);
    }
    for (const i of order)
      out[i]!.concurrentTokPerS.push((await peers[i]!.concurrent(prompts, OUTPUT)).tokPerS);
  }
  return out;
}

interface Equality {
  compared: number;
  /** First position where the ids differ, or -1. */
  firstMismatch: number;
  /** Tessera's top-2 gap there (nats), and whether llama.cpp took Tessera's second choice. */
  gap?: number;
  tookSecond?: boolean;
  nearTie: boolean;
}

/** Tessera's greedy ids (with top-2 logprobs) against llama.cpp's, up to the first divergence. */
function compareIds(ours: SingleRun, theirs: SingleRun): Equality {
  const n = Math.min(ours.ids.length, theirs.ids.length);
  for (let i = 0; i < n; i++) {
    if (ours.ids[i] === theirs.ids[i]) continue;
    const top = ours.top?.[i] ?? [];
    const gap = top.length >= 2 ? top[0]!.logprob - top[1]!.logprob : Number.POSITIVE_INFINITY;
    const tookSecond = top[1]?.id === theirs.ids[i];
    return { compared: i + 1, firstMismatch: i, gap, tookSecond, nearTie: tookSecond && gap <= NEAR_TIE };
  }
  return { compared: n, firstMismatch: -1, nearTie: false };
}

/**
 * Tessera's fp32 greedy ids against llama.cpp's on the F32 GGUF: with llama.cpp's K/V cache in F32
 * (the check: the conversion is right), and with its default F16 cache as the speed runs use it
 * (figures only: F16 rounding of K/V moves near-ties).
 */
async function greedyEquality(
  tessera: Peer,
  llama: Peer,
  gguf: string,
): Promise<{ f32Kv: Equality[]; defaultKv: Equality[] }> {
  const prompts = Array.from({ length: EQUALITY_PROMPTS }, () => randomIds(PROMPT));
  const ours: SingleRun[] = [];
  const defaultKv: Equality[] = [];
  for (const prompt of prompts) {
    const run = await tessera.single(prompt, OUTPUT, 2);
    ours.push(run);
    defaultKv.push(compareIds(run, await llama.single(prompt, OUTPUT)));
  }
  const exact = await llamaCppF32KvIds(gguf, THREADS, prompts, OUTPUT);
  const f32Kv = ours.map((o, i) => compareIds(o, { ttftMs: 0, decodeTokPerS: 0, ids: exact[i]! }));
  return { f32Kv, defaultKv };
}

export async function run(): Promise<void> {
  const loadBefore = os.loadavg();
  if (!fs.existsSync(path.join(MODEL_DIR, "config.json"))) {
    await createCheckpoint({ arch: "llama", preset: "base", seed: 1, out: MODEL_DIR });
  }
  const figures: Record<string, unknown> = {
    model: "base preset (llama, 12 layers, hidden 768, 12 heads / 4 KV heads, vocab 8192), seed 1",
    threads: THREADS,
    promptTokens: PROMPT,
    outputTokens: OUTPUT,
    concurrent: CONCURRENT,
    rounds: ROUNDS,
    tesseraQuantizedThrough: `tessera serve --quantization with its defaults (${quantizationLabel(defaultQuantization(8))}; ${quantizationLabel(defaultQuantization(4))})`,
  };
  const checks: Check[] = [];
  const gguf: Record<string, unknown> = {};
  const tessera: Record<string, Measured> = {};
  const llamaCpp: Record<string, Measured> = {};
  for (const [width, type] of WIDTHS) {
    const file = path.join(GGUF_DIR, `llama-base-${type}.gguf`);
    const t0 = performance.now();
    const converted = convertHfToGguf(MODEL_DIR, file, type);
    gguf[type] = { bytes: converted.bytes, convertMs: Math.round(performance.now() - t0) };
    const ours = await startTessera(MODEL_DIR, width, THREADS);
    const theirs = await startLlamaCpp(`llama.cpp ${type}`, file, THREADS, CONCURRENT, 256);
    try {
      if (width === "fp32") {
        const equality = await greedyEquality(ours, theirs, file);
        figures["f32GreedyEquality"] = { nearTieNats: NEAR_TIE, ...equality };
        const ok = equality.f32Kv.every((e) => e.firstMismatch < 0 || e.nearTie);
        checks.push(
          check(
            "F32 greedy ids: llama.cpp (F32 K/V) = Tessera fp32 (but at near-ties), 1 = yes",
            ok ? 1 : 0,
            ">=",
            1,
          ),
        );
      }
      const [t, l] = await measure([ours, theirs]);
      tessera[width] = t!;
      llamaCpp[type] = l!;
      const pair = `Tessera ${width} / llama.cpp ${type}`;
      checks.push(
        check(
          `${pair}: batch-1 decode tok/s`,
          median(t!.decodeTokPerS) / median(l!.decodeTokPerS),
          ">=",
          1.2,
        ),
        check(`${pair}: TTFT`, median(t!.ttftMs) / median(l!.ttftMs), "<=", 0.7),
        check(
          `${pair}: ${CONCURRENT} concurrent tok/s`,
          median(t!.concurrentTokPerS) / median(l!.concurrentTokPerS),
          ">=",
          2,
        ),
      );
    } finally {
      await ours.close();
      await theirs.close();
    }
  }
  const summary = (m: Measured) => ({
    ttftMs: median(m.ttftMs),
    decodeTokPerS: median(m.decodeTokPerS),
    concurrentTokPerS: median(m.concurrentTokPerS),
  });
  figures["gguf"] = gguf;
  figures["tessera"] = tessera;
  figures["llamaCpp"] = llamaCpp;
  figures["medians"] = {
    tessera: Object.fromEntries(Object.entries(tessera).map(([k, m]) => [k, summary(m)])),
    llamaCpp: Object.fromEntries(Object.entries(llamaCpp).map(([k, m]) => [k, summary(m)])),
  };
  figures["loadAverage"] = { before: loadBefore, after: os.loadavg() };
  writeResult({
    suite: "peers",
    description: `Tessera vs llama.cpp (node-llama-cpp 3.21.1, prebuilt CPU binary, in the bench process) on the base preset (llama, 88M params), llama.cpp reading GGUFs our own HF->GGUF writer made at F32 / Q8_0 / Q4_0 (devtools/gguf/); Tessera through tessera serve over gRPC at every width (int8/int4: --quantization); ${THREADS} threads each, ${PROMPT}-token prompts as token ids, greedy, ${OUTPUT} output tokens; TTFT and batch-1 decode (median of ${ROUNDS} requests), ${CONCURRENT} concurrent requests' throughput (median of ${ROUNDS} rounds), after a warm-up, engines alternating; llama.cpp's speed runs keep its defaults (F16 K/V cache, flash attention auto); F32 greedy ids of ${EQUALITY_PROMPTS} prompts (${OUTPUT} tokens) compared with llama.cpp's K/V cache in F32, up to the first divergence, allowed only at a near-tie (Tessera's top-2 within ${NEAR_TIE} nats and llama.cpp taking the second); with its default F16 cache in the figures. On a shared machine (load average in figures.loadAverage) llama.cpp's rounds spread much more than Tessera's: ggml's 2 threads spin-wait at each op's barrier, so a thread preempted by other work stalls both`,
    figures,
    checks,
  });
}

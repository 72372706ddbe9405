// `npm run bench -- quantization`: which MatMulNBits setting `tessera serve --quantization` should
// default to (issue 18), measured rather than assumed. On the `base` preset (llama, ≈88M parameters,
// the checkpoint the peers suite compares with llama.cpp), each setting's whole-model graph runs in this
// process through the executor every worker uses (onnx-ops attention):
//   - int4 and int8, blocks of 32 / 64 / 128 (and 256 at level 4), symmetric and asymmetric, at MatMulNBits accuracy levels
//     0 and 1 (float32 compute from the codes) and 4 (activations quantized to int8 per block, int8
//     dot products: AVX512-VNNI on this machine), and float32 for reference;
//   - prefill: one 128-token step (what TTFT is made of), CPU ms with 1 thread (the model's own cost,
//     which a busy machine inflates least) and wall ms with 2 threads (the peers suite's count);
//   - decode: batch-1 steps after that prompt, CPU ms per step with 1 thread, wall ms with 2.
// Medians of ROUNDS prefills and of DECODE_STEPS steps. What each setting costs in quality is the
// quality suite's (trained reference model); the serve default is picked from both.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import { onnxOpsAttention } from "../../services/worker/graph/attention-onnx-ops.ts";
import { ACCURACY_LEVEL } from "../../services/worker/graph/graph-weights-quantized.ts";
import { wholeModel } from "../../services/worker/graph/shard-graph.ts";
import { describeCheckpoint } from "../../services/worker/model/checkpoint.ts";
import {
  blockWise,
  isPerChannel,
  PER_CHANNEL,
  type QuantOptions,
  quantizationLabel,
} from "../../services/worker/model/quantize-blocks.ts";
import { WeightStore } from "../../services/worker/model/weights.ts";
import { allocateShardPool, ShardExecutor } from "../../services/worker/runtime/shard-executor.ts";
import { defaultQuantization } from "../../services/worker/server/serve-quantization-flags.ts";
import { type Check, check, writeResult } from "../report.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/llama-base");
const PROMPT = 128;
const DECODE_STEPS = 24;
const ROUNDS = 5;
const BLOCK = 16;

interface Setting {
  name: string;
  quantization?: QuantOptions;
  level?: number;
}

const q = (bits: 4 | 8, blockSize: number, symmetric: boolean, level: number): Setting => ({
  name: `int${bits} b${blockSize} ${symmetric ? "sym" : "asym"} level ${level}`,
  quantization: { bits, blockSize, symmetric },
  level,
});

/** Per-channel int8 (MatMulInteger, graph/graph-weights-channel.ts): no accuracy level applies. */
const channel = (symmetric: boolean): Setting => ({
  name: `int8 channel ${symmetric ? "sym" : "asym"}`,
  quantization: { bits: 8, blockSize: PER_CHANNEL, symmetric },
});

const SETTINGS: Setting[] = [
  { name: "float32" },
  ...[32, 64, 128].flatMap((b) => [true, false].flatMap((sym) => [0, 1, 4].map((l) => q(4, b, sym, l)))),
  // Longer blocks than GPTQ/AWQ's 128 at the fast level only: does the trend go on?
  ...[true, false].map((sym) => q(4, 256, sym, 4)),
  // 8 bits at levels 0/1 has no fast kernel in onnxruntime 1.30 (see graph-weights-quantized.ts):
  // measured at block 32 only.
  ...[0, 1].map((l) => q(8, 32, true, l)),
  ...[32, 64, 128, 256].flatMap((b) => [true, false].map((sym) => q(8, b, sym, 4))),
  ...[true, false].map(channel),
];

/** The store's weights, quantized as `s` says, with MatMulNBits at its accuracy level. */
function source(s: Setting): WeightStore {
  const w = WeightStore.open(MODEL_DIR, s.quantization ? { quantization: s.quantization } : {});
  if (s.level !== undefined) w.nbitsAccuracyLevel = s.level;
  return w;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

interface Timing {
  prefillMs: number[];
  decodeMsPerStep: number[];
}

/** Prefill ROUNDS prompts of PROMPT tokens, each followed by DECODE_STEPS greedy steps. */
async function time(s: Setting, threads: number, clock: "cpu" | "wall"): Promise<Timing> {
  const checkpoint = describeCheckpoint(MODEL_DIR);
  const spec = wholeModel(checkpoint.config.numLayers);
  const blocks = Math.ceil((PROMPT + DECODE_STEPS + 1) / BLOCK);
  const pool = allocateShardPool(checkpoint.config, spec, blocks, BLOCK);
  const executor = await ShardExecutor.create(checkpoint, source(s), onnxOpsAttention, spec, pool, {
    blockSize: BLOCK,
    threads,
    alone: true,
  });
  const table = Array.from({ length: blocks }, (_, i) => i);
  const start = () => (clock === "cpu" ? process.cpuUsage() : performance.now());
  const elapsed = (t0: NodeJS.CpuUsage | number) =>
    typeof t0 === "number" ? performance.now() - t0 : cpuMs(t0);
  const out: Timing = { prefillMs: [], decodeMsPerStep: [] };
  try {
    // Round 0 warms up (onnxruntime's arena, the first run's allocations) and is not recorded.
    for (let round = 0; round <= ROUNDS; round++) {
      const prompt = Int32Array.from({ length: PROMPT }, (_, i) => 3 + ((i * 53 + round * 17) % 2000));
      const t0 = start();
      let logits = await executor.run(
        [{ numPast: 0, numNew: PROMPT, blockTable: table, needsLogits: true }],
        {
          tokens: prompt,
        },
      );
      const prefill = elapsed(t0);
      const steps: number[] = [];
      for (let i = 0; i < DECODE_STEPS; i++) {
        let top = 0;
        for (let j = 1; j < logits.length; j++) if (logits[j]! > logits[top]!) top = j;
        const t1 = start();
        logits = await executor.run(
          [{ numPast: PROMPT + i, numNew: 1, blockTable: table, needsLogits: true }],
          { tokens: Int32Array.of(top) },
        );
        steps.push(elapsed(t1));
      }
      if (round === 0) continue;
      out.prefillMs.push(prefill);
      out.decodeMsPerStep.push(median(steps));
    }
  } finally {
    await executor.release();
  }
  return out;
}

/** Block-wise codes of at most 128 features a block, or per channel (no blocks to divide a row). */
function withinBlocksOf128(q: QuantOptions): boolean {
  const blocks = blockWise(q);
  return blocks === undefined || blocks.blockSize <= 128;
}

const settingOf = (o: QuantOptions | undefined, level: number) =>
  SETTINGS.find(
    (s) =>
      (s.level === level || (o !== undefined && isPerChannel(o))) &&
      s.quantization?.bits === o?.bits &&
      s.quantization?.blockSize === o?.blockSize &&
      s.quantization?.symmetric === o?.symmetric,
  );

/** `npm run bench -- quantization [name filter]`: a filter runs only the settings whose name has it. */
export async function run(args: string[] = []): Promise<void> {
  const filter = args[0];
  const settings = SETTINGS.filter((s) => filter === undefined || s.name.includes(filter));
  if (!fs.existsSync(path.join(MODEL_DIR, "config.json")))
    await createCheckpoint({ arch: "llama", preset: "base", seed: 1, out: MODEL_DIR });
  const loadBefore = os.loadavg();
  const results: Record<string, unknown> = {};
  const medians = new Map<string, { prefillCpuMs: number; decodeCpuMs: number }>();
  for (const s of settings) {
    const one = await time(s, 1, "cpu");
    const two = await time(s, 2, "wall");
    const m = {
      prefillCpuMs1Thread: median(one.prefillMs),
      decodeCpuMsPerStep1Thread: median(one.decodeMsPerStep),
      prefillWallMs2Threads: median(two.prefillMs),
      decodeWallMsPerStep2Threads: median(two.decodeMsPerStep),
    };
    medians.set(s.name, { prefillCpuMs: m.prefillCpuMs1Thread, decodeCpuMs: m.decodeCpuMsPerStep1Thread });
    results[s.name] = {
      quantization: quantizationLabel(s.quantization),
      accuracyLevel: s.level ?? null,
      ...m,
      raw: { cpu1Thread: one, wall2Threads: two },
    };
    console.log(
      `${s.name}: prefill ${m.prefillCpuMs1Thread.toFixed(1)} CPU ms (1 thread), ${m.prefillWallMs2Threads.toFixed(1)} ms (2 threads); decode ${m.decodeCpuMsPerStep1Thread.toFixed(2)} CPU ms/step, ${m.decodeWallMsPerStep2Threads.toFixed(2)} ms (2 threads)`,
    );
  }
  // The serve defaults (serve-quantization-flags.ts, graph-weights-quantized.ts) against the fastest
  // setting of their bits whose blocks divide common hidden sizes (at most 128: see
  // DEFAULT_QUANTIZATION_BLOCK_SIZE on 256): a later onnxruntime that moves the fast path fails here.
  const checks: Check[] = [];
  for (const bits of [4, 8] as const) {
    const serve = settingOf(defaultQuantization(bits), ACCURACY_LEVEL);
    const d = serve && medians.get(serve.name);
    if (!d) continue;
    const rivals = settings
      .filter((s) => s.quantization?.bits === bits && withinBlocksOf128(s.quantization))
      .map((s) => medians.get(s.name)!);
    for (const what of ["prefill", "decode"] as const) {
      const of = (x: { prefillCpuMs: number; decodeCpuMs: number }) =>
        what === "prefill" ? x.prefillCpuMs : x.decodeCpuMs;
      checks.push(
        check(
          `serve int${bits} default (${serve.name}): ${what} CPU ms / fastest int${bits} setting's (blocks <= 128)`,
          of(d) / Math.min(...rivals.map(of)),
          "<=",
          1.1,
        ),
      );
    }
  }
  const table = [...medians.entries()]
    .map(([k, v]) => `${k} ${v.prefillCpuMs.toFixed(1)} / ${v.decodeCpuMs.toFixed(2)}`)
    .join("; ");
  writeResult({
    suite: "quantization",
    description: `MatMulNBits settings for --quantization on the base preset (llama, 88M params), whole-model graph in one process (onnx-ops attention): int4 and int8 at blocks of 32/64/128 (256 at level 4), symmetric and asymmetric, accuracy levels 0/1 (float32 compute) and 4 (int8 activations), float32 for reference; ${PROMPT}-token prefill (CPU ms, 1 thread; wall ms, 2 threads) and batch-1 decode steps after it (median of ${DECODE_STEPS}), median of ${ROUNDS} rounds after a warm-up. Checks: the serve defaults (int4 and int8) within 10% of the fastest setting of their bits with blocks of at most 128 (256 divides fewer hidden sizes). Prefill CPU ms / decode CPU ms per step (1 thread): ${table}`,
    figures: {
      model: "base preset (llama, 12 layers, hidden 768, 12 heads / 4 KV heads, vocab 8192), seed 1",
      promptTokens: PROMPT,
      decodeSteps: DECODE_STEPS,
      rounds: ROUNDS,
      serveDefaults: {
        int8: quantizationLabel(defaultQuantization(8)),
        int4: quantizationLabel(defaultQuantization(4)),
        accuracyLevel: ACCURACY_LEVEL,
      },
      settings: results,
      loadAverage: { before: loadBefore, after: os.loadavg() },
    },
    checks,
  });
}

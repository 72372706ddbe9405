// `npm run bench -- batch` (issue 21): offline throughput of `tessera batch --model`'s path (an engine in
// its process, offline-engine.ts's scheduler, prefix caching) against the same requests sent to
// `tessera serve` over gRPC at several concurrencies, the best of which is the baseline. The requests:
// N greedy completions (ignore_eos, so every one generates max_tokens) whose prompts share one of a few
// long heads (a system prompt, few-shot examples) and end in their own question. Throughput is
// generated tokens per second of the batch itself (the model's load is not counted on either side).
import fs, { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { openBatchFiles } from "../../services/batch/batch-format.ts";
import { runBatch } from "../../services/batch/batch-runner.ts";
import { engineExecutor } from "../../services/cli/batch-engine-executor.ts";
import { startServe } from "../../services/cli/child-process.ts";
import { createLogger } from "../../services/kernel/log.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { loadOfflineEngine } from "../../services/worker/index.ts";
import { check, writeResult } from "../report.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/llama-small");
const REQUESTS = 512;
const MAX_TOKENS = 32;
const CONCURRENCIES = [16, 32, 64, 128, 256];

const WORDS =
  "the a model of river city light small old new red blue tree house road story quiet night".split(" ");

function prompts(): string[] {
  let seed = 2026;
  const word = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return WORDS[seed % WORDS.length];
  };
  const heads = Array.from({ length: 4 }, () => Array.from({ length: 120 }, word).join(" "));
  return Array.from(
    { length: REQUESTS },
    (_, i) =>
      `${heads[i % heads.length]} question ${i}: ${Array.from({ length: 8 + (i % 24) }, word).join(" ")}`,
  );
}

function writeInput(file: string, all: string[]): void {
  writeFileSync(
    file,
    all
      .map((prompt, i) =>
        JSON.stringify({
          custom_id: `r${i}`,
          method: "POST",
          url: "/v1/completions",
          body: { prompt, max_tokens: MAX_TOKENS, temperature: 0, ignore_eos: true },
        }),
      )
      .join("\n"),
  );
}

/**
 * `tessera batch --model`'s own path (offline-engine.ts's engine, the CLI's executor, the batch runner
 * and its JSONL files), in this process so that it is warmed up as the served engine is: onnxruntime's
 * first runs of each new batch shape are slow, and `tessera serve` stays up across the measurements.
 */
type OfflineEngineOptions = Parameters<Awaited<ReturnType<typeof loadOfflineEngine>>>[1];
type Attention = NonNullable<OfflineEngineOptions["engine"]>["attention"];

async function offlineRunner(dir: string, attention: Attention) {
  const offlineEngine = await loadOfflineEngine();
  const { engine, samplingDefaults } = await offlineEngine(MODEL_DIR, {
    log: createLogger("bench", "warn"),
    ...(attention && { engine: { attention } }),
  });
  const execute = engineExecutor(engine, samplingDefaults);
  const once = async (all: string[]) => {
    const input = path.join(dir, "in.jsonl");
    const output = path.join(dir, "out.jsonl");
    writeInput(input, all);
    rmSync(output, { force: true });
    const started = performance.now();
    const summary = await runBatch({ ...openBatchFiles("jsonl", input, output), execute, window: 512 });
    const seconds = (performance.now() - started) / 1000;
    if (summary.succeeded !== all.length) throw new Error(`offline batch: ${JSON.stringify(summary)}`);
    return { tokens: summary.completionTokens, seconds, tokensPerSecond: summary.completionTokens / seconds };
  };
  return { once, attention: engine.attention, close: () => engine.close() };
}

async function overGrpc(client: GrpcClient, all: string[], concurrency: number) {
  let next = 0;
  let tokens = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < all.length) {
      const prompt = all[next++]!;
      for await (const m of client.serverStream(Inference.method.generate, {
        prompt: { case: "text", value: prompt },
        sampling: { maxTokens: MAX_TOKENS, temperature: 0, ignoreEos: true },
      }))
        tokens += m.tokens.length;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { concurrency, tokens, seconds, tokensPerSecond: tokens / seconds };
}

/**
 * Rounds of every measurement, interleaved (every serve concurrency, then the offline batch), so that a
 * slow spell of the shared 2-core machine falls on both sides alike. Each side is taken at its median
 * round, which one outlier cannot move: single runs of the same batch measured 2x apart (3.7 s vs 7.1 s).
 */
const ROUNDS = 4;

/** `--rounds N` runs fewer (or more) rounds while iterating; the check is meant for the default. */
function roundsOf(argv: readonly string[]): number {
  const at = argv.indexOf("--rounds");
  const n = at >= 0 ? Number(argv[at + 1]) : ROUNDS;
  if (!Number.isInteger(n) || n < 1) throw new Error(`--rounds: a positive integer, got ${argv[at + 1]}`);
  return n;
}

/** `--attention NAME` forces both sides' backend (to compare backends); default: the offline engine's pick. */
function attentionOf(argv: readonly string[]): Attention {
  const at = argv.indexOf("--attention");
  // The engine's config parser refuses a name that is no backend.
  return at >= 0 ? (argv[at + 1] as Attention) : undefined;
}

export async function run(argv: readonly string[] = []): Promise<void> {
  const rounds = roundsOf(argv);
  if (!fs.existsSync(path.join(MODEL_DIR, "config.json")))
    await createCheckpoint({ arch: "llama", preset: "small", seed: 1, out: MODEL_DIR });
  const loadBefore = os.loadavg();
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-bench-batch-"));
  const all = prompts();
  const batch = await offlineRunner(dir, attentionOf(argv));
  // The served engine runs the attention backend the offline one picked: each process races them at
  // start on a small probe, the pick differs between processes and runs, and at this batch's decode
  // shapes (32 sequences, ~200 cached tokens) onnx-ops took ~25% less time per token than ms-gqa, so
  // the two sides on different backends measured that rather than the batch path.
  const served = await startServe(MODEL_DIR, ["--attention", batch.attention.backend]);
  const client = new GrpcClient(served.address);
  const serve: Awaited<ReturnType<typeof overGrpc>>[] = [];
  const offlineRuns: Awaited<ReturnType<typeof batch.once>>[] = [];
  const started = performance.now();
  try {
    await waitUntilServing(served.address, 120_000);
    // Warm-up, alike on both sides.
    await overGrpc(client, all, 256);
    await batch.once(all);
    // The served engine idles while the offline one runs (and the other way round).
    for (let round = 0; round < rounds; round++) {
      for (const c of CONCURRENCIES) serve.push(await overGrpc(client, all, c));
      offlineRuns.push(await batch.once(all));
    }
  } finally {
    client.close();
    await batch.close();
    served.child.kill("SIGTERM");
    await served.exited;
    rmSync(dir, { recursive: true, force: true });
  }
  const byConcurrency = CONCURRENCIES.map((concurrency) => {
    const runs = serve.filter((r) => r.concurrency === concurrency).map((r) => r.tokensPerSecond);
    return { concurrency, medianTokensPerSecond: median(runs), bestTokensPerSecond: Math.max(...runs) };
  });
  const bestServe = byConcurrency.reduce((a, b) =>
    b.medianTokensPerSecond > a.medianTokensPerSecond ? b : a,
  );
  const offlineTps = offlineRuns.map((r) => r.tokensPerSecond);
  const offline = { medianTokensPerSecond: median(offlineTps), bestTokensPerSecond: Math.max(...offlineTps) };
  const ratio = offline.medianTokensPerSecond / bestServe.medianTokensPerSecond;
  writeResult({
    suite: "batch",
    description:
      `${REQUESTS} greedy completions (${MAX_TOKENS} tokens each, prompts sharing one of 4 heads of 120 words) on the small llama preset: ` +
      "`tessera batch --model`'s path (its engine defaults: two model replicas with half the cores each, one onnxruntime thread each here; its executor and runner, in the bench process) against `tessera serve` (its defaults, with the attention backend the offline engine picked) over gRPC at concurrencies " +
      `${CONCURRENCIES.join(", ")}; each side warmed up once with the whole batch, then ${rounds} interleaved rounds; the offline median round against the median round of serve's best concurrency (by median); generated tokens per second of the batch, load not counted.`,
    figures: {
      requests: REQUESTS,
      maxTokens: MAX_TOKENS,
      rounds,
      offline,
      bestServe,
      byConcurrency,
      // The same comparison between the fastest rounds of each side, for reference (not checked).
      bestRoundRatio:
        offline.bestTokensPerSecond / Math.max(...byConcurrency.map((c) => c.bestTokensPerSecond)),
      offlineRuns,
      serve,
      attention: { offline: batch.attention, serve: servedAttention(served.logs) },
      suiteSeconds: (performance.now() - started) / 1000,
      loadAverage: { before: loadBefore, after: os.loadavg() },
    },
    checks: [check("offline tok/s over tessera serve gRPC at its best concurrency", ratio, ">=", 1.3)],
  });
}

/** The attention backend `tessera serve` logged at load, with the timings that chose it. */
function servedAttention(logs: readonly Record<string, unknown>[]) {
  const loaded = logs.find((l) => l["msg"] === "model loaded");
  return { backend: loaded?.["attention"], timingsMs: loaded?.["attentionTimingsMs"] };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

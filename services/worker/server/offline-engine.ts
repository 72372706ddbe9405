// The engine `tessera batch` runs in its own process: no gRPC server, no router, the model's sampling
// defaults (generation_config.json) as `tessera serve` serves them, and a scheduler sized for
// throughput on a CPU engine, with prefix caching so that requests sharing a prompt head (a system
// prompt, few-shot examples) compute it once. Measured on the bench batch (512 requests, 2 CPU cores,
// tokens/s in process, best of 3): 256 running with 2048-token steps 3,766; 128/512 3,414; 64/512 4,874;
// 64/1024 5,130; 32/512 5,676 (noisy: 2 shared cores). A step's cost grows faster than its rows
// (step-inputs.ts pads each attention group to its longest row), so fewer rows run faster per token.
//
// Two scheduling loops (virtual engines, half the running requests each) keep the model thread busy: while it runs one
// loop's step, the event loop samples, streams and schedules the other's, where one loop left the model
// idle between steps (~14% of the batch's time, measured per step). Median of 3 interleaved rounds of
// the bench batch (2 shared cores, others' specs running): 3,023 -> 3,189 tokens/s with ms-gqa
// attention, 4,774 -> 4,854 with onnx-ops. The pool is split between the loops, so they are used only
// where half of it still holds a request of the model's whole context.
//
// Attention is shared-prefix (graph/attention-shared-prefix.ts): a batch's requests mostly share prompt
// heads, which that backend reads once per group of decode rows instead of once per row, so a decode
// row costs about its own tokens rather than its whole context. The start-up race's small probes are
// too noisy on a busy machine to see it (three races in a row picked onnx-ops, onnx-ops, ms-gqa).
// With it larger batches pay again: 64 rows a loop (128 running) instead of 32; a decode step of the
// bench's shapes (160 of 230 cached tokens shared) took 214 us a row at 64 rows against 242 at 32.
//
// Replicas (engine-replicas.ts): the engine is loaded twice, each copy with half the cores for
// onnxruntime and half the KV budget, and requests go to the less busy one. One step split over both
// cores waits at every operator for the slower thread (and for the event loop, which shares the cores);
// two steps of one thread each do not: 1 thread ran the bench batch at 3,127 tok/s against 5,489 for 2
// (1.76x for twice the cores). Offline can take it because it has no latency target: a replica's step
// takes about twice as long, which would double `tessera serve`'s time per token. Measured A/B in
// process, bench batch, 3 rounds each, back to back under the bench lock: one engine 1,104 -> two
// replicas 1,652 tok/s (load ~4, another bench running) and 3,014 -> 3,578 (load ~2.7). Greedy outputs
// are the same (e2e/batch/cli-batch.spec.ts compares them with --threads 1; the bench batch's 512
// texts matched one engine's). `npm run bench -- batch` back to back, load ~2-3: one engine 3,911
// tok/s, 1.159x serve (3,375); replicas 5,343, 1.567x serve (3,410). Cost: a second copy of
// the weights; the prefix cache is per replica, so a shared head is computed once per replica.
import os from "node:os";
import type { SamplingDefaults } from "../../inference/sampling-params.ts";
import type { Logger } from "../../kernel/log.ts";
import { Engine } from "../engine/engine.ts";
import {
  type EngineConfigInput,
  kvBlockBytes,
  parseEngineConfig,
  poolBlocks,
} from "../engine/engine-config.ts";
import { EngineReplicas } from "./engine-replicas.ts";
import { servedCheckpoint } from "./serve-model-flags.ts";
import { servedSamplingDefaults } from "./served-sampling-defaults.ts";

/** The scheduler each replica runs with unless told otherwise (maxNumSeqs over both loops). */
export const OFFLINE_ENGINE: EngineConfigInput = {
  maxNumSeqs: 128,
  maxNumBatchedTokens: 1024,
  enablePrefixCaching: true,
  attention: "shared-prefix",
};

const LOOPS = 2;

/**
 * Replicas at most: each holds a copy of the weights, so memory, not the cores, bounds them; two already
 * take the cost of splitting one step over the cores away on a 2-core machine.
 */
const MAX_REPLICAS = 2;

export interface OfflineEngineOptions {
  /** onnxruntime threads over all replicas (default: every core); 1 runs one replica of one thread. */
  threads?: number | undefined;
  engine?: EngineConfigInput | undefined;
  log: Logger;
}

/** How many replicas and onnxruntime threads each, for `threads` over all of them (0: every core). */
export function replicaPlan(threads: number, cores: number): { replicas: number; threadsEach: number } {
  const total = threads > 0 ? threads : Math.max(1, cores);
  const replicas = Math.min(MAX_REPLICAS, total);
  return { replicas, threadsEach: Math.floor(total / replicas) };
}

export async function offlineEngine(
  modelDir: string,
  options: OfflineEngineOptions,
): Promise<{ engine: EngineReplicas; samplingDefaults: SamplingDefaults }> {
  const checkpoint = servedCheckpoint(modelDir, {});
  const samplingDefaults = servedSamplingDefaults(checkpoint, "auto", options.log);
  const input: EngineConfigInput = { ...OFFLINE_ENGINE, ...options.engine };
  const plan = replicaPlan(options.threads ?? input.threads ?? 0, os.availableParallelism());
  const defaults = parseEngineConfig(input);
  // The KV budget is the replicas' together, as one engine would have it.
  const config: EngineConfigInput = {
    ...input,
    threads: plan.threadsEach,
    ...(input.kvCacheBlocks === undefined && {
      kvCacheBytes: Math.max(1, Math.floor(defaults.kvCacheBytes / plan.replicas)),
    }),
  };
  const model = checkpoint.config;
  const parsed = parseEngineConfig(config);
  const fits =
    Math.floor(poolBlocks(parsed, model) / LOOPS) >= Math.ceil(model.maxContext / parsed.blockSize);
  const load = (attention: EngineConfigInput["attention"]) =>
    Engine.load(modelDir, {
      log: options.log,
      engine: { ...(fits && { virtualEngines: LOOPS }), ...config, attention },
    });
  const rssBefore = process.memoryUsage.rss();
  const first = await load(config.attention);
  const memory = {
    copyBytes: process.memoryUsage.rss() - rssBefore,
    kvPoolBytes: poolBlocks(parsed, model) * kvBlockBytes(parsed, model),
    availableBytes: process.availableMemory(),
  };
  const more = replicasThatFit(plan.replicas - 1, memory);
  if (more < plan.replicas - 1)
    options.log.warn(
      { replicas: 1 + more, planned: plan.replicas, ...memory },
      "fewer model replicas than cores call for: another copy of the weights would not fit in memory",
    );
  // The others run the backend the first picked (a race of their own could pick another).
  const backend = first.attention.backend as EngineConfigInput["attention"];
  const rest = await Promise.allSettled(Array.from({ length: more }, () => load(backend)));
  const loaded = [first, ...rest.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []))];
  const failed = rest.find((r) => r.status === "rejected");
  if (failed) {
    await Promise.all(loaded.map((e) => e.close()));
    throw failed.reason;
  }
  return { engine: new EngineReplicas(loaded), samplingDefaults };
}

/**
 * How many of `wanted` more replicas fit in memory: each takes what the first took at load (`copyBytes`:
 * its weights and graph, as the resident set grew) and a KV pool of its own, and the pools, not yet
 * touched at load, fill as requests run; a tenth of what is available is left for everything else.
 * A second copy of a model's weights is the replicas' cost, so a model that fits once but not twice
 * runs as one replica (with its share of the KV budget) instead of failing or swapping.
 */
export function replicasThatFit(
  wanted: number,
  m: { copyBytes: number; kvPoolBytes: number; availableBytes: number },
): number {
  const room = m.availableBytes * 0.9 - m.kvPoolBytes; // the first replica's pool
  const each = Math.max(0, m.copyBytes) + m.kvPoolBytes;
  return Math.max(0, Math.min(wanted, Math.floor(room / each)));
}

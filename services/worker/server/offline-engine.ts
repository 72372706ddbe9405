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
import type { SamplingDefaults } from "../../inference/sampling-params.ts";
import type { Logger } from "../../kernel/log.ts";
import { Engine } from "../engine/engine.ts";
import { type EngineConfigInput, parseEngineConfig, poolBlocks } from "../engine/engine-config.ts";
import { servedCheckpoint } from "./serve-model-flags.ts";
import { servedSamplingDefaults } from "./served-sampling-defaults.ts";

/** The scheduler `tessera batch` runs with unless told otherwise (maxNumSeqs over both loops). */
export const OFFLINE_ENGINE: EngineConfigInput = {
  maxNumSeqs: 128,
  maxNumBatchedTokens: 1024,
  enablePrefixCaching: true,
  attention: "shared-prefix",
};

const LOOPS = 2;

export interface OfflineEngineOptions {
  threads?: number | undefined;
  engine?: EngineConfigInput | undefined;
  log: Logger;
}

export async function offlineEngine(
  modelDir: string,
  options: OfflineEngineOptions,
): Promise<{ engine: Engine; samplingDefaults: SamplingDefaults }> {
  const checkpoint = servedCheckpoint(modelDir, {});
  const samplingDefaults = servedSamplingDefaults(checkpoint, "auto", options.log);
  const config: EngineConfigInput = { ...OFFLINE_ENGINE, ...options.engine };
  const model = checkpoint.config;
  const parsed = parseEngineConfig(config);
  const fits =
    Math.floor(poolBlocks(parsed, model) / LOOPS) >= Math.ceil(model.maxContext / parsed.blockSize);
  const engine = await Engine.load(modelDir, {
    log: options.log,
    engine: { ...(fits && { virtualEngines: LOOPS }), ...config },
    ...(options.threads !== undefined && { threads: options.threads }),
  });
  return { engine, samplingDefaults };
}

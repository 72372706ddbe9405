// The engine `tessera batch` runs in its own process: no gRPC server, no router, the model's sampling
// defaults (generation_config.json) as `tessera serve` serves them, and a scheduler sized for
// throughput rather than latency — a large running batch and a large token budget per step (long
// prompts are still prefilled in chunks of it), with prefix caching so that requests sharing a prompt
// head (a system prompt, few-shot examples) compute it once.
import type { SamplingDefaults } from "../../inference/sampling-params.ts";
import type { Logger } from "../../kernel/log.ts";
import { Engine } from "../engine/engine.ts";
import type { EngineConfigInput } from "../engine/engine-config.ts";
import { servedCheckpoint } from "./serve-model-flags.ts";
import { servedSamplingDefaults } from "./served-sampling-defaults.ts";

/** The scheduler `tessera batch` runs with unless told otherwise. */
export const OFFLINE_ENGINE: EngineConfigInput = {
  maxNumSeqs: 256,
  maxNumBatchedTokens: 2048,
  enablePrefixCaching: true,
};

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
  const engine = await Engine.load(modelDir, {
    log: options.log,
    engine: { ...OFFLINE_ENGINE, ...options.engine },
    ...(options.threads !== undefined && { threads: options.threads }),
  });
  return { engine, samplingDefaults };
}

// Builds the configured proposer beside a loaded target model: prompt lookup needs nothing; a draft
// model is checked against the target (same vocabulary, same tokenizer) and loaded in a model thread of
// its own with its own KV pool.
import type { ModelDescription } from "../../inference/types.ts";
import type { Logger } from "../../kernel/log.ts";
import type { EngineConfig } from "../engine/engine-config.ts";
import { DraftModelProposer } from "./draft-model-proposer.ts";
import { NgramProposer } from "./ngram-proposer.ts";
import { SpecDecoder } from "./spec-decoder.ts";
import type { SpeculativeConfig } from "./speculative-config.ts";

export interface SpeculativeContext {
  target: ModelDescription;
  /** The target's checkpoint folder (the draft must carry the same tokenizer). */
  targetDir: string;
  engine: EngineConfig;
  log: Logger | undefined;
}

export async function startSpeculative(
  config: SpeculativeConfig,
  context: SpeculativeContext,
): Promise<SpecDecoder> {
  switch (config.method) {
    case "ngram":
      return new SpecDecoder(config, new NgramProposer(config), context.target.maxContext);
    case "draft_model": {
      const proposer = await DraftModelProposer.start(config, context);
      return new SpecDecoder(config, proposer, context.target.maxContext);
    }
    default: {
      const never: never = config;
      throw new Error(`unknown speculative method ${JSON.stringify(never)}`);
    }
  }
}

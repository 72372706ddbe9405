// What the gRPC service needs from a loaded model: the Engine satisfies it, and unit tests can fake it.

import type { ChatTemplate } from "./chat-template.ts";
import type { SamplingDefaults } from "./sampling-params.ts";
import type { GenerateEvent, GenerateRequest, ModelDescription } from "./types.ts";

export interface ServedTokenizer {
  readonly vocabSize: number;
  encode(text: string, options: { addSpecialTokens: boolean }): number[];
  decode(ids: number[]): string;
}

export interface ServedModel {
  readonly description: ModelDescription;
  readonly tokenizer: ServedTokenizer;
  /** The checkpoint's chat template, for chat prompts; undefined when it has none. */
  readonly chatTemplate?: ChatTemplate | undefined;
  generate(request: GenerateRequest, signal?: AbortSignal): AsyncIterable<GenerateEvent>;
}

/**
 * What a router needs to know beside the description: the KV-block hash salt, the stop ids and what an
 * unset sampling field means.
 */
export interface ServedModelInfo {
  /** The checkpoint's revision (model/checkpoint.ts); the engine salts block hashes with id@revision. */
  revision: string;
  kvBlockSize: number;
  eosTokenIds: readonly number[];
  /** The model's sampling defaults (generation_config.json unless served with --generation-config none). */
  samplingDefaults?: SamplingDefaults | undefined;
}

// A model the router serves: its tokenizer and chat template (read from the checkpoint folder the
// config names) and what its workers report about it (revision, context, vocabulary, KV block size,
// eos ids), which the router needs to validate requests and to compute the workers' block hashes.
import type { ModelInfo } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { SAMPLING_DEFAULT_FIELDS, type SamplingDefaults } from "../../inference/sampling-params.ts";
import { Tokenizer } from "../../tokenizer/tokenizer.ts";
import type { ToolCallParserName } from "../tools/tool-call-parsers.ts";
import { ChatTemplate } from "./chat-template.ts";

export interface RouterModelConfig {
  id: string;
  /** Checkpoint folder holding tokenizer.json and tokenizer_config.json. */
  tokenizer: string;
  /** Largest max_tokens a request may ask for (unset: the model's context). */
  maxTokens?: number | undefined;
  /** How the model writes tool calls (unset: as its chat template shows, services/router/tools). */
  toolCallParser?: ToolCallParserName | undefined;
}

/** What the workers serving a model report about it. */
export interface WorkerModelInfo {
  revision: string;
  architecture: string;
  dtype: string;
  maxContext: number;
  vocabSize: number;
  blockSize: number;
  eosTokenIds: readonly number[];
  /** What an unset sampling field means for this model (the worker's generation_config.json defaults). */
  samplingDefaults?: SamplingDefaults | undefined;
}

export class RouterModel {
  readonly id: string;
  readonly tokenizer: Tokenizer;
  readonly chatTemplate: ChatTemplate | undefined;
  readonly maxTokens: number | undefined;
  readonly toolCallParser: ToolCallParserName | undefined;
  /** Undefined until a worker serving the model reported it. */
  info: WorkerModelInfo | undefined;

  constructor(config: RouterModelConfig, tokenizer: Tokenizer, chatTemplate: ChatTemplate | undefined) {
    this.id = config.id;
    this.tokenizer = tokenizer;
    this.chatTemplate = chatTemplate;
    this.maxTokens = config.maxTokens;
    this.toolCallParser = config.toolCallParser;
  }

  static load(config: RouterModelConfig): RouterModel {
    return new RouterModel(
      config,
      Tokenizer.fromFile(config.tokenizer),
      ChatTemplate.fromModelDir(config.tokenizer),
    );
  }

  /** The block-hash salt the workers use: `${modelId}@${revision}`. */
  get salt(): string {
    return `${this.id}@${this.info?.revision ?? ""}`;
  }
}

export function workerModelInfo(info: ModelInfo, fallbackEos: number | undefined): WorkerModelInfo {
  return {
    revision: info.revision,
    architecture: info.architecture,
    dtype: info.dtype,
    maxContext: info.maxContext,
    vocabSize: info.vocabSize,
    // Workers from before kv_block_size was reported use the engine's default block size.
    blockSize: info.kvBlockSize || 16,
    eosTokenIds:
      info.eosTokenIds.length > 0 ? info.eosTokenIds : fallbackEos === undefined ? [] : [fallbackEos],
    // Workers from before sampling_defaults was reported apply none.
    samplingDefaults: presentDefaults(info.samplingDefaults),
  };
}

/** The fields the message sets (proto3 optional: unset ones are undefined). */
function presentDefaults(message: ModelInfo["samplingDefaults"]): SamplingDefaults {
  const defaults: SamplingDefaults = {};
  for (const key of Object.keys(SAMPLING_DEFAULT_FIELDS) as (keyof SamplingDefaults)[]) {
    const value = message?.[key];
    if (value !== undefined) defaults[key] = value;
  }
  return defaults;
}

// A request as the router core takes it, whichever front door it came through, and the same request
// once validated, tokenized and keyed.

import type { RawSamplingParams, SamplingDefaults } from "../../inference/sampling-params.ts";
import type { SamplingParams } from "../../inference/types.ts";
import type { ChatMessage, ChatOptions } from "../models/chat-template.ts";
import type { RouterModel, WorkerModelInfo } from "../models/router-model.ts";
import type { RoutingKey } from "../routing/routing-key.ts";

export type RouterPrompt =
  /** Tokenized with the model's special tokens (e.g. bos), as the workers do. */
  | { type: "text"; text: string }
  | { type: "tokens"; ids: number[] }
  /**
   * Rendered with the model's chat template, then tokenized without adding special tokens
   * (services/inference/chat-prompt.ts); options unset: the default template with a generation prompt.
   */
  | { type: "chat"; messages: ChatMessage[]; options?: ChatOptions | undefined };

export interface RouterRequest {
  requestId: string;
  /** "" means the router's only model. */
  model: string;
  prompt: RouterPrompt;
  /**
   * As the proto says (services/inference/sampling-params.ts): an unset temperature, top_p, top_k, min_p
   * or repetition_penalty takes the model's default (its workers report it), else `apiSamplingDefaults`,
   * else the neutral value; the other fields' zero means their default.
   */
  sampling: RawSamplingParams;
  /** What an unset field means when the model has no default, by the front door's convention (OpenAI: temperature 1). */
  apiSamplingDefaults?: SamplingDefaults | undefined;
  /** Keeps a conversation on one replica. */
  sessionKey?: string | undefined;
  apiKey?: string | undefined;
  /** Milliseconds since the epoch. */
  deadline?: number | undefined;
  /** Leave the tokenizer's special tokens (e.g. <|im_end|>) out of the text (vLLM's skip_special_tokens). */
  skipSpecialTokens?: boolean | undefined;
  /** The request field that set sampling.structured (`response_format`, `guided_json`...), for its errors. */
  structuredField?: string | undefined;
  /** The workers schedule lower values first (default 0, interactive); batch lines run at a higher one. */
  priority?: number | undefined;
}

export interface PreparedRequest {
  request: RouterRequest;
  model: RouterModel;
  info: WorkerModelInfo;
  promptIds: number[];
  sampling: SamplingParams;
  key: RoutingKey;
}

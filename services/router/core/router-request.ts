// A request as the router core takes it, whichever front door it came through, and the same request
// once validated, tokenized and keyed.

import type { RawSamplingParams } from "../../inference/sampling-params.ts";
import type { SamplingParams } from "../../inference/types.ts";
import type { ChatMessage } from "../models/chat-template.ts";
import type { RouterModel, WorkerModelInfo } from "../models/router-model.ts";
import type { RoutingKey } from "../routing/routing-key.ts";

export type RouterPrompt =
  /** Tokenized with the model's special tokens (e.g. bos), as the workers do. */
  | { type: "text"; text: string }
  | { type: "tokens"; ids: number[] }
  /** Rendered with the model's chat template, then tokenized without adding special tokens. */
  | { type: "chat"; messages: ChatMessage[] };

export interface RouterRequest {
  requestId: string;
  /** "" means the router's only model. */
  model: string;
  prompt: RouterPrompt;
  /** Proto3 semantics: zero or unset means the default (see services/inference/sampling-params.ts). */
  sampling: RawSamplingParams;
  /** Keeps a conversation on one replica. */
  sessionKey?: string | undefined;
  apiKey?: string | undefined;
  /** Milliseconds since the epoch. */
  deadline?: number | undefined;
}

export interface PreparedRequest {
  request: RouterRequest;
  model: RouterModel;
  info: WorkerModelInfo;
  promptIds: number[];
  sampling: SamplingParams;
  key: RoutingKey;
}

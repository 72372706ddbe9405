// What the router streams back for one request, whichever front door asked: token messages with the
// router's own detokenized text, then one finish message with the reason and usage.
import type { FinishReason, TokenInfo } from "../../../proto/gen/tessera/v1/inference_pb.js";

export interface RouterUsage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * `index`: which of the request's sequences (n, best_of) the event belongs to (unset: 0); each ends with
 * its own finish. `promptTokens`: with prompt logprobs (or echo with logprobs), on the first event of
 * sequence 0, one entry per prompt token (the first's logprob NaN).
 */
export type RouterEvent =
  | { type: "tokens"; tokens: TokenInfo[]; text: string; index?: number; promptTokens?: TokenInfo[] }
  | { type: "finish"; reason: FinishReason; usage: RouterUsage; text: string; index?: number };

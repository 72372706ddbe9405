// What the router streams back for one request, whichever front door asked: token messages with the
// router's own detokenized text, then one finish message with the reason and usage.
import type { FinishReason, TokenInfo } from "../../../proto/gen/tessera/v1/inference_pb.js";

export interface RouterUsage {
  promptTokens: number;
  completionTokens: number;
}

export type RouterEvent =
  | { type: "tokens"; tokens: TokenInfo[]; text: string }
  | { type: "finish"; reason: FinishReason; usage: RouterUsage; text: string };

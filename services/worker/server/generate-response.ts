// Maps one engine event to one GenerateResponse message.
import { create } from "@bufbuild/protobuf";
import {
  FinishReason,
  type GenerateResponse,
  GenerateResponseSchema,
  type TokenInfo,
  TokenInfoSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import type { ServedTokenizer } from "../../inference/served-model.ts";
import type {
  FinishReason as EngineFinishReason,
  GeneratedToken,
  GenerateEvent,
} from "../../inference/types.ts";

export function toGenerateResponse(
  event: GenerateEvent,
  requestId: string,
  tokenizer: ServedTokenizer,
): GenerateResponse {
  switch (event.type) {
    case "tokens":
      return create(GenerateResponseSchema, {
        requestId,
        tokens: event.tokens.map((token) => toTokenInfo(token, tokenizer)),
        textDelta: event.textDelta,
        index: event.index ?? 0,
        ...(event.promptTokens && {
          // The first prompt token has no logprob: NaN on the wire, as the proto says.
          promptLogprobs: event.promptTokens.map((t) =>
            toTokenInfo({ ...t, logprob: t.logprob ?? Number.NaN }, tokenizer),
          ),
        }),
      });
    case "finish": {
      const { promptTokens, completionTokens } = event.usage;
      return create(GenerateResponseSchema, {
        requestId,
        textDelta: event.textDelta,
        finishReason: toProtoFinishReason(event.reason),
        usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens },
        kvWritesFailed: event.kvWritesFailed === true,
        index: event.index ?? 0,
      });
    }
    default:
      return assertNever(event);
  }
}

function toTokenInfo(token: GeneratedToken, tokenizer: ServedTokenizer): TokenInfo {
  return create(TokenInfoSchema, {
    tokenId: token.tokenId,
    logprob: token.logprob,
    topLogprobs: token.top.map((alt) => ({
      tokenId: alt.tokenId,
      logprob: alt.logprob,
      text: tokenizer.decode([alt.tokenId]),
    })),
  });
}

export function toProtoFinishReason(reason: EngineFinishReason): FinishReason {
  switch (reason) {
    case "stop":
      return FinishReason.STOP;
    case "length":
      return FinishReason.LENGTH;
    case "stop_string":
      return FinishReason.STOP_STRING;
    case "context":
      return FinishReason.CONTEXT;
    case "cancelled":
      return FinishReason.CANCELLED;
    default:
      return assertNever(reason);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}

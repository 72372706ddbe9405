// After a step: append a request's sampled token, run the stop checks, and push its events.
// Returns the finish reason when the request is done.

import type { FinishReason, GeneratedToken, PromptToken } from "../../inference/types.ts";
import type { EngineRequest } from "./request.ts";

export interface OutputLimits {
  maxContext: number;
  eosTokenIds: readonly number[];
}

export function appendToken(
  request: EngineRequest,
  token: GeneratedToken,
  limits: OutputLimits,
): FinishReason | undefined {
  request.tokens.push(token.tokenId);
  request.history?.append(token.tokenId);
  const prompt = promptEntries(request);
  const params = request.sampling;
  const stopsOnId =
    params.stopTokenIds.includes(token.tokenId) ||
    (!params.ignoreEos && limits.eosTokenIds.includes(token.tokenId));
  if (stopsOnId) {
    // The stop token is reported among the ids but adds no text.
    request.events.push({ type: "tokens", tokens: [token], textDelta: "", ...prompt });
    return "stop";
  }
  const matched = request.stops.push(request.text.push(token.tokenId));
  request.events.push({ type: "tokens", tokens: [token], textDelta: matched.text, ...prompt });
  if (matched.stopped) return "stop_string";
  if (request.numOutputTokens >= params.maxTokens) return "length";
  // The token just appended sits at position numTokens - 1; the next one would fall outside the context.
  if (request.numTokens >= limits.maxContext) return "context";
  return undefined;
}

/** With its first token, a request asking for prompt logprobs sends them (once). */
function promptEntries(request: EngineRequest): { promptTokens?: PromptToken[] } {
  if (request.promptTokens === undefined || request.promptTokensSent) return {};
  request.promptTokensSent = true;
  const first = { tokenId: request.tokens[0]!, logprob: undefined, top: [] };
  return { promptTokens: [first, ...request.promptTokens.slice(1, request.promptLength)] };
}

/** The final event: the text still held back (unless a stop string cut it) and the usage. */
export function finishEvents(request: EngineRequest, reason: FinishReason): void {
  const rest = reason === "stop_string" ? "" : request.stops.flush(request.text.flush());
  request.finishReason = reason;
  const event = {
    type: "finish",
    reason,
    usage: { promptTokens: request.promptLength, completionTokens: request.numOutputTokens },
    textDelta: rest,
  } as const;
  if (request.awaitKvWrites && request.kvWrites.length > 0) {
    // A prefill worker's handoff: the next worker may only be told once the blocks are stored.
    void Promise.all(request.kvWrites).then((stored) => {
      request.events.push(stored.includes(false) ? { ...event, kvWritesFailed: true } : event);
      request.events.end();
    });
    return;
  }
  request.events.push(event);
  request.events.end();
}

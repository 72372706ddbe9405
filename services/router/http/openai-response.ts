// OpenAI-compatible response bodies and stream chunks, built from the router's events. A chat request
// whose output is read for tool calls (tool-call-plan.ts) gets an assistant message with `tool_calls`
// (streamed as deltas by the handler, with ToolCallStream), and finish_reason "tool_calls" when the
// model stopped after calling.
import { FinishReason, type TokenInfo } from "../../../proto/gen/tessera/v1/inference_pb.js";
import type { Tokenizer } from "../../tokenizer/tokenizer.ts";
import type { RouterEvent, RouterUsage } from "../core/router-events.ts";
import { type OutputDelta, parseMessage, type ToolCallDelta } from "../tools/tool-call-output.ts";
import type { ToolCallParser } from "../tools/tool-call-parser.ts";

export type Kind = "completion" | "chat";

export interface ResponseContext {
  kind: Kind;
  id: string;
  model: string;
  created: number;
  tokenizer: Tokenizer;
  /** Log probabilities asked for (with this many alternatives); undefined: none. */
  logprobs: number | undefined;
  /** How the output is read for tool calls; undefined: it is not. */
  tools?: { parser: ToolCallParser; parallel: boolean } | undefined;
}

export function finishReason(reason: FinishReason): string {
  switch (reason) {
    case FinishReason.STOP:
    case FinishReason.STOP_STRING:
      return "stop";
    case FinishReason.LENGTH:
    case FinishReason.CONTEXT:
      return "length";
    default:
      return "abort";
  }
}

export function usageBody(usage: RouterUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** The logprobs object of a choice for these tokens, in the kind's format; null when not asked. */
export function logprobsBody(
  ctx: ResponseContext,
  tokens: readonly TokenInfo[],
  textOffset: number,
): unknown {
  if (ctx.logprobs === undefined) return null;
  const text = (id: number) => ctx.tokenizer.decode([id]);
  if (ctx.kind === "chat") {
    const entry = (id: number, logprob: number) => ({
      token: text(id),
      logprob,
      bytes: [...Buffer.from(text(id))],
    });
    return {
      content: tokens.map((t) => ({
        ...entry(t.tokenId, t.logprob),
        top_logprobs: t.topLogprobs.map((a) => entry(a.tokenId, a.logprob)),
      })),
    };
  }
  const offsets: number[] = [];
  let at = textOffset;
  for (const t of tokens) {
    offsets.push(at);
    at += text(t.tokenId).length;
  }
  return {
    tokens: tokens.map((t) => text(t.tokenId)),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) =>
      Object.fromEntries(t.topLogprobs.map((a) => [text(a.tokenId), a.logprob])),
    ),
    text_offset: offsets,
  };
}

/** "tool_calls" where the model stopped after calling, else the event's reason. */
function chatFinishReason(reason: FinishReason, called: boolean): string {
  const finish = finishReason(reason);
  return called && finish === "stop" ? "tool_calls" : finish;
}

/**
 * One stream chunk for an event; `first` marks the chat stream's opening chunk (it names the role).
 * `output`: the event's text as read for tool calls (content and call deltas), `called` whether a call
 * was streamed; without them the event's text is the content.
 */
export function chunkBody(
  ctx: ResponseContext,
  event: RouterEvent,
  textOffset: number,
  first: boolean,
  output?: { delta: OutputDelta; called: boolean },
) {
  const tokens = event.type === "tokens" ? event.tokens : [];
  const finish = event.type === "finish" ? chatFinishReason(event.reason, output?.called === true) : null;
  const logprobs = tokens.length > 0 ? logprobsBody(ctx, tokens, textOffset) : null;
  const choice =
    ctx.kind === "chat"
      ? {
          index: 0,
          delta: { ...(first && { role: "assistant" }), ...deltaBody(event.text, output?.delta) },
          logprobs,
          finish_reason: finish,
        }
      : { index: 0, text: event.text, logprobs, finish_reason: finish };
  return {
    id: ctx.id,
    object: ctx.kind === "chat" ? "chat.completion.chunk" : "text_completion",
    created: ctx.created,
    model: ctx.model,
    choices: [choice],
  };
}

function deltaBody(
  text: string,
  output: OutputDelta | undefined,
): { content?: string; tool_calls?: ToolCallDelta[] } {
  if (output === undefined) return { content: text };
  if (output.toolCalls.length === 0) return { content: output.content };
  return { ...(output.content !== "" && { content: output.content }), tool_calls: output.toolCalls };
}

/** The final stream chunk carrying the usage (stream_options.include_usage). */
export function usageChunkBody(ctx: ResponseContext, usage: RouterUsage) {
  return {
    id: ctx.id,
    object: ctx.kind === "chat" ? "chat.completion.chunk" : "text_completion",
    created: ctx.created,
    model: ctx.model,
    choices: [],
    usage: usageBody(usage),
  };
}

/** The whole (non-streamed) response. */
export function responseBody(ctx: ResponseContext, events: readonly RouterEvent[]) {
  const tokens = events.flatMap((e) => (e.type === "tokens" ? e.tokens : []));
  const text = events.map((e) => e.text).join("");
  const finish = events.at(-1);
  const usage =
    finish?.type === "finish" ? finish.usage : { promptTokens: 0, completionTokens: tokens.length };
  const logprobs = logprobsBody(ctx, tokens, 0);
  const parsed = ctx.tools && parseMessage(ctx.tools.parser, text, ctx.tools.parallel);
  const called = parsed !== undefined && parsed.toolCalls.length > 0;
  const reason = finish?.type === "finish" ? chatFinishReason(finish.reason, called) : "abort";
  const message = called
    ? { role: "assistant", content: parsed.content, tool_calls: parsed.toolCalls }
    : { role: "assistant", content: text };
  const choice =
    ctx.kind === "chat"
      ? { index: 0, message, logprobs, finish_reason: reason }
      : { index: 0, text, logprobs, finish_reason: reason };
  return {
    id: ctx.id,
    object: ctx.kind === "chat" ? "chat.completion" : "text_completion",
    created: ctx.created,
    model: ctx.model,
    choices: [choice],
    usage: usageBody(usage),
  };
}

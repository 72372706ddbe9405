// OpenAI-compatible response bodies and stream chunks, built from the router's events. A request's
// sequences (n) are its choices, by index; usage counts the prompt once and the completion tokens of
// every choice. With echo (completions) the prompt's text already opens each choice's text (the router
// core wrote it) and, with logprobs, the prompt tokens open each choice's logprobs (the first with
// null, as OpenAI). vLLM's prompt_logprobs is a list with null for the first prompt token and, for each
// other, {token id: {logprob, rank, decoded_token}} for the token and its top alternatives (rank only
// where it is known: the alternatives' ranks); on each choice of a completion, at the top of a chat
// completion, as vLLM places it. A chat request whose output is read for tool calls
// (tool-call-plan.ts) gets, per choice, an assistant message with `tool_calls` (streamed as deltas by
// the handler, with one ToolCallStream per choice), and finish_reason "tool_calls" when the model
// stopped after calling.
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
  /** Choices asked for (n); default 1. */
  n?: number;
  /** completions' echo: the prompt tokens' logprobs open each choice's logprobs. */
  echo?: boolean;
  /** vLLM's prompt_logprobs asked for. */
  promptLogprobs?: number | undefined;
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
  prompt?: readonly TokenInfo[],
): unknown {
  if (ctx.logprobs === undefined) return null;
  if (ctx.kind === "completion" && ctx.echo && prompt) return echoedLogprobs(ctx, prompt, tokens);
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

/** The prompt's logprobs and the choice's in one completions logprobs object (echo with logprobs). */
function echoedLogprobs(ctx: ResponseContext, prompt: readonly TokenInfo[], tokens: readonly TokenInfo[]) {
  const text = (id: number) => ctx.tokenizer.decode([id]);
  const all = [...prompt, ...tokens];
  const offsets: number[] = [];
  let at = 0;
  for (const t of all) {
    offsets.push(at);
    at += text(t.tokenId).length;
  }
  return {
    tokens: all.map((t) => text(t.tokenId)),
    token_logprobs: all.map((t) => (Number.isNaN(t.logprob) ? null : t.logprob)),
    top_logprobs: all.map((t, i) =>
      i === 0 && prompt.length > 0
        ? null
        : Object.fromEntries(t.topLogprobs.map((a) => [text(a.tokenId), a.logprob])),
    ),
    text_offset: offsets,
  };
}

/** vLLM's prompt_logprobs list: null for the first prompt token, then {id: {logprob, rank?, decoded_token}}. */
export function promptLogprobsBody(ctx: ResponseContext, prompt: readonly TokenInfo[] | undefined): unknown {
  if (ctx.promptLogprobs === undefined) return undefined;
  const text = (id: number) => ctx.tokenizer.decode([id]);
  return (prompt ?? []).map((t, i) => {
    if (i === 0) return null;
    const entries: Record<string, { logprob: number; rank?: number; decoded_token: string }> = {
      [t.tokenId]: { logprob: t.logprob, decoded_token: text(t.tokenId) },
    };
    t.topLogprobs.forEach((a, rank) => {
      entries[a.tokenId] = { logprob: a.logprob, rank: rank + 1, decoded_token: text(a.tokenId) };
    });
    return entries;
  });
}

/** "tool_calls" where the model stopped after calling, else the event's reason. */
function chatFinishReason(reason: FinishReason, called: boolean): string {
  const finish = finishReason(reason);
  return called && finish === "stop" ? "tool_calls" : finish;
}

/**
 * One stream chunk for an event; `first` marks a choice's opening chunk (a chat choice names its role
 * there); `prompt`: the prompt's entries, given with each choice's first chunk (echo, prompt_logprobs).
 * `output`: the event's text as read for tool calls (content and call deltas), `called` whether a call
 * was streamed in this choice; without them the event's text is the content.
 */
export function chunkBody(
  ctx: ResponseContext,
  event: RouterEvent,
  textOffset: number,
  first: boolean,
  prompt?: readonly TokenInfo[],
  output?: { delta: OutputDelta; called: boolean },
) {
  const tokens = event.type === "tokens" ? event.tokens : [];
  const index = event.index ?? 0;
  const finish = event.type === "finish" ? chatFinishReason(event.reason, output?.called === true) : null;
  const echoed = first && ctx.echo ? prompt : undefined;
  const logprobs = tokens.length > 0 ? logprobsBody(ctx, tokens, textOffset, echoed) : null;
  const promptLogprobs = first && ctx.kind === "completion" ? promptLogprobsBody(ctx, prompt) : undefined;
  const choice =
    ctx.kind === "chat"
      ? {
          index,
          delta: { ...(first && { role: "assistant" }), ...deltaBody(event.text, output?.delta) },
          logprobs,
          finish_reason: finish,
        }
      : {
          index,
          text: event.text,
          logprobs,
          finish_reason: finish,
          ...(promptLogprobs !== undefined && { prompt_logprobs: promptLogprobs }),
        };
  const chatPrompt =
    first && index === 0 && ctx.kind === "chat" ? promptLogprobsBody(ctx, prompt) : undefined;
  return {
    id: ctx.id,
    object: ctx.kind === "chat" ? "chat.completion.chunk" : "text_completion",
    created: ctx.created,
    model: ctx.model,
    choices: [choice],
    ...(chatPrompt !== undefined && { prompt_logprobs: chatPrompt }),
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

/** The whole (non-streamed) response: one choice per sequence, by index. */
export function responseBody(ctx: ResponseContext, events: readonly RouterEvent[]) {
  const n = ctx.n ?? 1;
  let prompt: TokenInfo[] | undefined;
  for (const e of events) if (e.type === "tokens" && e.promptTokens) prompt ??= e.promptTokens;
  const usage = { promptTokens: 0, completionTokens: 0 };
  const choices = Array.from({ length: n }, (_, index) => {
    const own = events.filter((e) => (e.index ?? 0) === index);
    const tokens = own.flatMap((e) => (e.type === "tokens" ? e.tokens : []));
    const text = own.map((e) => e.text).join("");
    const finish = own.find((e) => e.type === "finish");
    usage.promptTokens = finish?.usage.promptTokens ?? usage.promptTokens;
    usage.completionTokens += finish ? finish.usage.completionTokens : tokens.length;
    const logprobs = logprobsBody(ctx, tokens, 0, ctx.echo ? prompt : undefined);
    if (ctx.kind === "chat") {
      const parsed = ctx.tools && parseMessage(ctx.tools.parser, text, ctx.tools.parallel);
      const called = parsed !== undefined && parsed.toolCalls.length > 0;
      const reason = finish ? chatFinishReason(finish.reason, called) : "abort";
      const message = called
        ? { role: "assistant", content: parsed.content, tool_calls: parsed.toolCalls }
        : { role: "assistant", content: text };
      return { index, message, logprobs, finish_reason: reason };
    }
    const reason = finish ? finishReason(finish.reason) : "abort";
    const promptLogprobs = promptLogprobsBody(ctx, prompt);
    return {
      index,
      text,
      logprobs,
      finish_reason: reason,
      ...(promptLogprobs !== undefined && { prompt_logprobs: promptLogprobs }),
    };
  });
  const chatPrompt = ctx.kind === "chat" ? promptLogprobsBody(ctx, prompt) : undefined;
  return {
    id: ctx.id,
    object: ctx.kind === "chat" ? "chat.completion" : "text_completion",
    created: ctx.created,
    model: ctx.model,
    choices,
    usage: usageBody(usage),
    ...(chatPrompt !== undefined && { prompt_logprobs: chatPrompt }),
  };
}

// POST /v1/completions and /v1/chat/completions: parse, hand to the router core, answer as one JSON
// body or as Server-Sent Events (`data: {chunk}` ... `data: [DONE]`). Status and headers wait for the
// first event, so a refusal before it is a real HTTP status (400, 401, 404, 429, 503); a failure after
// it ends the stream with `data: {"error": ...}`, which the OpenAI clients raise as an APIError.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TokenInfo } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Generation, Router } from "../core/router.ts";
import type { RouterEvent } from "../core/router-events.ts";
import { endpointsHeader, pathHeader, servingTiming } from "../core/serving-path.ts";
import { bearer } from "../grpc/grpc-request.ts";
import { joinDeltas, type OutputDelta, ToolCallStream } from "../tools/tool-call-output.ts";
import { errorBody, sendError, sendJson } from "./http-errors.ts";
import { promptErrorAs } from "./openai-prompt-field.ts";
import {
  OPENAI_SAMPLING_DEFAULTS,
  type OpenAiRequest,
  parseChatRequest,
  parseCompletionRequest,
} from "./openai-request.ts";
import {
  chunkBody,
  type Kind,
  type ResponseContext,
  responseBody,
  usageChunkBody,
} from "./openai-response.ts";
import { toolCallPlan } from "./tool-call-plan.ts";

export interface GenerateOutcome {
  model: string;
  code: Code;
}

export async function handleGenerate(
  kind: Kind,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  router: Router,
  signal: AbortSignal,
): Promise<GenerateOutcome> {
  const started = performance.now();
  const parsed = kind === "chat" ? parseChatRequest(body) : parseCompletionRequest(body);
  if (parsed.error) throw parsed.error;
  const request = parsed.value;
  const tools = toolsOf(request, router);
  const requestId = header(req, "x-request-id") ?? randomUUID();
  const generating = router.generate(
    {
      requestId,
      model: request.model,
      prompt: request.prompt,
      sampling: request.sampling,
      apiSamplingDefaults: OPENAI_SAMPLING_DEFAULTS,
      skipSpecialTokens: request.skipSpecialTokens,
      structuredField: request.structuredField,
      sessionKey: header(req, router.sessionHeader),
      apiKey: bearer(header(req, "authorization")) ?? header(req, "x-api-key"),
    },
    signal,
  );
  const generation = await generating.catch(promptErrorAs(kind === "chat" ? "messages" : "prompt"));
  const model = router.models.resolve(generation.model).value!;
  const ctx: ResponseContext = {
    kind,
    id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${requestId}`,
    model: model.id,
    created: Math.floor(Date.now() / 1000),
    tokenizer: model.tokenizer,
    logprobs: request.logprobs,
    n: request.n,
    echo: request.echo,
    promptLogprobs: request.promptLogprobs,
    tools,
  };
  const headers = {
    "x-request-id": requestId,
    "x-tessera-endpoint": generation.endpoint,
    "x-tessera-cache": generation.cache,
  };
  if (!request.stream) {
    const events: RouterEvent[] = [];
    await generation.read((event) => {
      events.push(event);
    });
    sendJson(res, 200, responseBody(ctx, events), {
      ...headers,
      ...servedHeaders(generation.served, started),
    });
    return { model: model.id, code: Code.OK };
  }
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    // The workers after the first are known only at the end: HTTP trailers (chunked encoding).
    trailer: "x-tessera-path, x-tessera-endpoints, server-timing",
    ...headers,
  });
  let code: Code = Code.OK;
  try {
    // Per choice: its text so far (logprobs' text_offset), whether its first chunk went out, and how
    // its output is read for tool calls.
    const offsets = new Array<number>(request.n).fill(0);
    const opened = new Array<boolean>(request.n).fill(false);
    const calls = Array.from({ length: request.n }, () =>
      tools ? new ToolCallStream(tools.parser, tools.parallel) : undefined,
    );
    let prompt: TokenInfo[] | undefined;
    const usage = { promptTokens: 0, completionTokens: 0 };
    let finished = 0;
    await generation.read((event) => {
      const index = event.index ?? 0;
      if (event.type === "tokens" && event.promptTokens) prompt = event.promptTokens;
      const choiceCalls = calls[index];
      const output = choiceCalls && toolOutput(choiceCalls, event);
      send(res, chunkBody(ctx, event, offsets[index] ?? 0, !opened[index], prompt, output));
      offsets[index] = (offsets[index] ?? 0) + event.text.length;
      opened[index] = true;
      if (event.type !== "finish") return;
      usage.promptTokens = event.usage.promptTokens;
      usage.completionTokens += event.usage.completionTokens;
      if (++finished === request.n && request.includeUsage) send(res, usageChunkBody(ctx, usage));
    });
    res.write("data: [DONE]\n\n");
  } catch (err) {
    const error = TesseraError.from(signal.aborted ? signal.reason : err);
    code = error.code;
    if (!signal.aborted) res.write(`data: ${JSON.stringify(errorBody(error))}\n\n`);
  }
  res.addTrailers(servedHeaders(generation.served, started));
  res.end();
  return { model: model.id, code };
}

/** How the chat request's output is read for tool calls (tool-call-plan.ts); throws its 400. */
function toolsOf(request: OpenAiRequest, router: Router): ResponseContext["tools"] {
  if (request.tools === undefined || request.prompt.type !== "chat") return undefined;
  // An unknown model, or one without a chat template, is left for the router to refuse as for any chat.
  const model = router.models.resolve(request.model);
  if (model.error || model.value.chatTemplate === undefined) return undefined;
  const template = request.prompt.options?.template;
  const plan = toolCallPlan(request.tools, model.value, template, request.skipSpecialTokens);
  if (plan.error) throw plan.error;
  return plan.value && { parser: plan.value, parallel: request.tools.parallel };
}

/** The event's text read for tool calls; the finish event also sends what was held back. */
function toolOutput(calls: ToolCallStream, event: RouterEvent): { delta: OutputDelta; called: boolean } {
  const delta = calls.push(event.text);
  return { delta: event.type === "finish" ? joinDeltas(delta, calls.finish()) : delta, called: calls.called };
}

/** Answers an error unless the response has started (then the stream already said it). */
export function answerError(res: ServerResponse, err: unknown): Code {
  const error = TesseraError.from(err);
  if (!res.headersSent) sendError(res, error);
  else res.end();
  return error.code;
}

/** One SSE message; the socket buffers it for a slow reader (a generation is bounded by max_tokens). */
function send(res: ServerResponse, body: unknown): void {
  res.write(`data: ${JSON.stringify(body)}\n\n`);
}

/** How the request was served (serving-path.ts): `x-tessera-path`, `x-tessera-endpoints`, `server-timing`. */
function servedHeaders(served: Generation["served"], started: number): Record<string, string> {
  return {
    "x-tessera-path": pathHeader(served),
    "x-tessera-endpoints": endpointsHeader(served),
    "server-timing": servingTiming(served, started),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === "" ? undefined : first;
}

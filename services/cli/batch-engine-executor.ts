// `tessera batch`'s in-process executor: a batch line runs on an engine in this process, validated and
// answered exactly as the router's OpenAI door would (its parser and response shaping, through the
// router's public entry): the prompt tokenized or rendered with the chat template, an unset sampling
// field taking the model's default (generation_config.json), else OpenAI's. A bad body is answered with
// the 400 and error body the router would give, never thrown.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import {
  FinishReason,
  TokenInfoSchema,
  TokenLogprobSchema,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import type { BatchExecutor, BatchRequest, BatchResponse } from "../batch/batch-types.ts";
import { chatPromptIds } from "../inference/chat-prompt.ts";
import { checkPromptIds, promptIdsFromText } from "../inference/generate-request.ts";
import { parseSamplingParams, type SamplingDefaults } from "../inference/sampling-params.ts";
import type { ServedModel } from "../inference/served-model.ts";
import type { FinishReason as EngineFinishReason, GenerateEvent } from "../inference/types.ts";
import { Code, type Result, TesseraError } from "../kernel/errors.ts";
import {
  errorBody,
  httpStatus,
  OPENAI_SAMPLING_DEFAULTS,
  type OpenAiRequest,
  parseChatRequest,
  parseCompletionRequest,
  type RouterEvent,
  responseBody,
} from "../router/index.ts";
import type { Tokenizer } from "../tokenizer/tokenizer.ts";

export type BatchModel = ServedModel & { readonly tokenizer: Tokenizer };

export function engineExecutor(model: BatchModel, samplingDefaults: SamplingDefaults): BatchExecutor {
  return async (request, signal) => {
    const requestId = randomUUID();
    try {
      return await run(model, samplingDefaults, request, requestId, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const error = TesseraError.from(err);
      return { statusCode: httpStatus(error.code), requestId, body: errorBody(error) };
    }
  };
}

async function run(
  model: BatchModel,
  samplingDefaults: SamplingDefaults,
  request: BatchRequest,
  requestId: string,
  signal: AbortSignal,
): Promise<BatchResponse> {
  const kind = request.url === "/v1/chat/completions" ? "chat" : "completion";
  const parsed = kind === "chat" ? parseChatRequest(request.body) : parseCompletionRequest(request.body);
  const openai = orThrow(parsed);
  if (openai.stream) throw TesseraError.invalidArgument("stream", "a batch request is never streamed");
  const { description } = model;
  if (openai.model !== "" && openai.model !== description.id)
    throw TesseraError.notFound(`model "${openai.model}" is not served here (serving "${description.id}")`);
  const promptIds = orThrow(promptOf(openai, model));
  const sampling = orThrow(
    parseSamplingParams(
      openai.sampling,
      { vocabSize: description.vocabSize },
      { ...OPENAI_SAMPLING_DEFAULTS, ...samplingDefaults },
    ),
  );
  // As the router caps it (prepare-request.ts): a model served alone has its context as the cap.
  if (sampling.maxTokens > description.maxContext)
    throw TesseraError.invalidArgument("max_tokens", `must be <= ${description.maxContext}`);
  if (openai.skipSpecialTokens === true && sampling.stop.length > 0)
    throw TesseraError.invalidArgument(
      "skip_special_tokens",
      "is not supported with stop strings in a batch",
    );
  const events: RouterEvent[] = [];
  const text = openai.skipSpecialTokens ? model.tokenizer.textStream({ skipSpecialTokens: true }) : undefined;
  // The response reads the tokens' ids and logprobs for its logprobs alone (usage comes with the finish).
  const withTokens = openai.logprobs !== undefined;
  for await (const event of model.generate({ requestId, promptIds, sampling }, signal))
    events.push(routerEvent(event, text, withTokens));
  const last = events.at(-1);
  if (last?.type === "finish" && last.reason === FinishReason.CANCELLED)
    throw new TesseraError(Code.CANCELLED, "the batch was interrupted");
  const body = responseBody(
    {
      kind,
      id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${requestId}`,
      model: description.id,
      created: Math.floor(Date.now() / 1000),
      tokenizer: model.tokenizer,
      logprobs: openai.logprobs,
    },
    events,
  );
  return { statusCode: 200, requestId, body };
}

function promptOf(request: OpenAiRequest, model: BatchModel): Result<number[]> {
  const { prompt } = request;
  switch (prompt.type) {
    case "text":
      return promptIdsFromText(prompt.text, model);
    case "tokens":
      return checkPromptIds(prompt.ids, model.description);
    case "chat": {
      const ids = chatPromptIds(
        { messages: prompt.messages, options: prompt.options ?? {} },
        model.chatTemplate,
        model.tokenizer,
        model.description.id,
      );
      return ids.error ? ids : checkPromptIds(ids.value, model.description);
    }
  }
}

/**
 * An engine event as the router's (the response shaping reads those), re-detokenized when asked; its
 * tokens as the router's TokenInfo only `withTokens` (a message per generated token costs the batch
 * time for nothing when no logprobs are asked).
 */
function routerEvent(
  event: GenerateEvent,
  text: ReturnType<Tokenizer["textStream"]> | undefined,
  withTokens: boolean,
): RouterEvent {
  if (event.type === "tokens") {
    const tokens = (withTokens ? event.tokens : []).map((t) =>
      create(TokenInfoSchema, {
        tokenId: t.tokenId,
        logprob: t.logprob,
        topLogprobs: t.top.map((a) => create(TokenLogprobSchema, a)),
      }),
    );
    const delta = text ? event.tokens.map((t) => text.push(t.tokenId)).join("") : event.textDelta;
    return { type: "tokens", tokens, text: delta };
  }
  return {
    type: "finish",
    reason: FINISH[event.reason],
    usage: event.usage,
    text: text ? text.flush() : event.textDelta,
  };
}

const FINISH: Record<EngineFinishReason, FinishReason> = {
  stop: FinishReason.STOP,
  length: FinishReason.LENGTH,
  stop_string: FinishReason.STOP_STRING,
  context: FinishReason.CONTEXT,
  cancelled: FinishReason.CANCELLED,
};

function orThrow<T>(result: Result<T>): T {
  if (result.error) throw result.error;
  return result.value;
}

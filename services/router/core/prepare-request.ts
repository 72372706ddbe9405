// Validation before any work: the model exists and has reported in, the prompt tokenizes and fits
// the context, max_tokens is within the cap, every sampling field is in range (an unset one resolved to
// the model's default, which the workers report, so the router routes, caches and sends to the worker
// the parameters the request will really run with). Errors are
// INVALID_ARGUMENT naming the field (as the workers word them), NOT_FOUND for an unknown model.

import { chatPromptIds } from "../../inference/chat-prompt.ts";
import { checkPromptIds } from "../../inference/generate-request.ts";
import { parseSamplingParams } from "../../inference/sampling-params.ts";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import type { ModelRegistry } from "../models/model-registry.ts";
import type { RouterModel } from "../models/router-model.ts";
import { routingKey } from "../routing/routing-key.ts";
import type { PreparedRequest, RouterPrompt, RouterRequest } from "./router-request.ts";

/** How long a client should wait before asking for a model no worker has reported yet. */
const NOT_READY_RETRY_MS = 1_000;

export function prepareRequest(
  request: RouterRequest,
  models: ModelRegistry,
  options: { prefixBlocks: number },
): Result<PreparedRequest> {
  const model = models.resolve(request.model);
  if (model.error) return model;
  const info = model.value.info;
  if (info === undefined) {
    const message = `no endpoint serving model "${model.value.id}" has reported in yet`;
    return { error: new TesseraError(Code.UNAVAILABLE, message, { retryAfterMs: NOT_READY_RETRY_MS }) };
  }
  const tokenized = promptIds(request.prompt, model.value);
  if (tokenized.error) return tokenized;
  const checked = checkPromptIds(tokenized.value, info);
  if (checked.error) return checked;
  const sampling = parseSamplingParams(
    request.sampling,
    { vocabSize: info.vocabSize },
    { ...request.apiSamplingDefaults, ...info.samplingDefaults },
  );
  if (sampling.error) return sampling;
  const cap = model.value.maxTokens ?? info.maxContext;
  if (sampling.value.maxTokens > cap)
    return { error: TesseraError.invalidArgument("max_tokens", `must be <= ${cap}`) };
  const key = routingKey({
    promptIds: checked.value,
    blockSize: info.blockSize,
    salt: model.value.salt,
    prefixBlocks: options.prefixBlocks,
    sessionKey: request.sessionKey,
  });
  return {
    value: { request, model: model.value, info, promptIds: checked.value, sampling: sampling.value, key },
  };
}

function promptIds(prompt: RouterPrompt, model: RouterModel): Result<number[]> {
  switch (prompt.type) {
    case "tokens":
      return { value: prompt.ids };
    case "text":
      if (prompt.text === "") return { error: TesseraError.invalidArgument("text", "must not be empty") };
      return { value: model.tokenizer.encode(prompt.text, { addSpecialTokens: true }) };
    case "chat":
      return chatPromptIds(
        { messages: prompt.messages, options: prompt.options ?? {} },
        model.chatTemplate,
        model.tokenizer,
        model.id,
      );
    default:
      return assertNever(prompt);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected prompt ${JSON.stringify(value)}`);
}

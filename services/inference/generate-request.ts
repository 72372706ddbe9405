// Maps a GenerateRequest message to the engine's GenerateRequest, validating every field against
// the served model; a sampling field the message leaves unset takes the model's default. Each error is
// INVALID_ARGUMENT naming the field, or NOT_FOUND for the model.
import type {
  GenerateRequest as GenerateRequestMessage,
  SamplingParams as SamplingParamsMessage,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import { type Result, TesseraError } from "../kernel/errors.ts";
import { chatPromptFromMessage, chatPromptIds } from "./chat-prompt.ts";
import { parseSamplingParams, type RawSamplingParams, type SamplingDefaults } from "./sampling-params.ts";
import type { ServedModel } from "./served-model.ts";
import { structuredFromMessage } from "./structured-output.ts";
import type { GenerateRequest, ModelDescription } from "./types.ts";

export function toEngineRequest(
  message: GenerateRequestMessage,
  model: ServedModel,
  requestId: string,
  samplingDefaults: SamplingDefaults = {},
): Result<GenerateRequest> {
  const resolved = resolveModel(message.model, model);
  if (resolved.error) return resolved;
  const promptIds = promptTokenIds(message.prompt, model);
  if (promptIds.error) return promptIds;
  const raw = samplingFromMessage(message.sampling);
  if (raw.error) return raw;
  const sampling = parseSamplingParams(
    raw.value,
    { vocabSize: model.description.vocabSize },
    samplingDefaults,
  );
  if (sampling.error) return sampling;
  if (!Number.isInteger(message.priority))
    return { error: TesseraError.invalidArgument("priority", "must be an integer") };
  const kv = message.kv && {
    expectedRemoteBlocks: message.kv.expectedRemoteBlocks,
    awaitWrites: message.kv.awaitWrites,
  };
  return {
    value: {
      requestId,
      promptIds: promptIds.value,
      sampling: sampling.value,
      priority: message.priority,
      ...(kv && { kv }),
    },
  };
}

/** An empty model name means the only model served here. */
export function resolveModel(name: string, model: ServedModel): Result<ServedModel> {
  if (name === "" || name === model.description.id) return { value: model };
  return {
    error: TesseraError.notFound(`model "${name}" is not served here (serving "${model.description.id}")`),
  };
}

function promptTokenIds(prompt: GenerateRequestMessage["prompt"], model: ServedModel): Result<number[]> {
  switch (prompt.case) {
    case undefined:
      return { error: TesseraError.invalidArgument("prompt", "set text, token_ids or chat") };
    case "text":
      return promptIdsFromText(prompt.value, model);
    case "tokenIds":
      return checkPromptIds(prompt.value.ids, model.description);
    case "chat": {
      const ids = chatPromptIds(
        chatPromptFromMessage(prompt.value),
        model.chatTemplate,
        model.tokenizer,
        model.description.id,
      );
      return ids.error ? ids : checkContext(ids.value, model.description.maxContext);
    }
  }
}

/** Tokenizes a text prompt with the tokenizer's special tokens (e.g. bos), as the model expects. */
export function promptIdsFromText(text: string, model: ServedModel): Result<number[]> {
  if (text === "") return { error: TesseraError.invalidArgument("text", "must not be empty") };
  const ids = model.tokenizer.encode(text, { addSpecialTokens: true });
  return checkContext(ids, model.description.maxContext);
}

/** Checks token ids given as the prompt: not empty, inside the vocabulary, fitting the context. */
export function checkPromptIds(
  ids: number[],
  { vocabSize, maxContext }: Pick<ModelDescription, "vocabSize" | "maxContext">,
): Result<number[]> {
  if (ids.length === 0) return { error: TesseraError.invalidArgument("token_ids", "must not be empty") };
  const bad = ids.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
  if (bad >= 0) {
    const message = `${ids[bad]} is outside the vocabulary (ids 0..${vocabSize - 1})`;
    return { error: TesseraError.invalidArgument(`token_ids[${bad}]`, message) };
  }
  return checkContext(ids, maxContext);
}

function checkContext(ids: number[], maxContext: number): Result<number[]> {
  if (ids.length < maxContext) return { value: ids };
  const message = `${ids.length} tokens do not fit the model's context of ${maxContext} (at least one must be generated)`;
  return { error: TesseraError.invalidArgument("prompt", message) };
}

/**
 * The message's fields as they arrive (every sampling field, present and future, by its name; an unset
 * optional one undefined): the sampling parser applies the defaults and validates.
 */
function samplingFromMessage(message: SamplingParamsMessage | undefined): Result<RawSamplingParams> {
  if (message === undefined) return { value: {} };
  const { $typeName: _, structured: wire, ...fields } = message;
  const structured = structuredFromMessage(wire);
  if (structured.error) return structured;
  return {
    value: {
      ...fields,
      ...(structured.value && {
        structured: structured.value.structured,
        structuredMatchedTokens: structured.value.matchedTokens,
      }),
    },
  };
}

// OpenAI-compatible request bodies (/v1/completions, /v1/chat/completions) as RouterRequests. A field
// Tessera does not know is refused with 400 naming it (`unknown_field: not a parameter of
// /v1/completions`), as OpenAI's own API refuses unrecognized arguments, so nothing a client sends is
// silently dropped; fields Tessera cannot honour (n > 1, echo, tools, a non-empty logit_bias...) are
// refused naming the parameter. OpenAI fields that change nothing in the output (user, metadata,
// service_tier, prompt_cache_key, safety_identifier; parallel_tool_calls without tools) are accepted.
// A sampling field the body leaves out (or null) stays unset, so it takes the model's default (its
// generation_config.json, as vLLM does), else OpenAI's (OPENAI_SAMPLING_DEFAULTS: temperature 1;
// max_tokens 16; the rest off); vLLM's extra fields (top_k, min_p, repetition_penalty, ignore_eos,
// stop_token_ids, min_tokens, skip_special_tokens; for chat add_generation_prompt,
// continue_final_message, chat_template_kwargs and chat_template naming one of the model's own templates)
// are honoured. min_tokens must not exceed max_tokens (16 when the body leaves it out, as OpenAI's).
// Tessera's own extension: disable_speculation (true: no speculative decoding for this request).
import { z } from "zod";
import type { RawSamplingParams, SamplingDefaults } from "../../inference/sampling-params.ts";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import type { RouterPrompt } from "../core/router-request.ts";

/** OpenAI's meaning of an unset field where the model has no default of its own. */
export const OPENAI_SAMPLING_DEFAULTS: SamplingDefaults = { temperature: 1 };

const nullable = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

const common = {
  model: nullable(z.string()),
  temperature: nullable(z.number().min(0).max(2)),
  top_p: nullable(z.number().gt(0).max(1)),
  top_k: nullable(z.int().min(-1)),
  min_p: nullable(z.number().min(0).max(1)),
  repetition_penalty: nullable(z.number().gt(0)),
  presence_penalty: nullable(z.number().min(-2).max(2)),
  frequency_penalty: nullable(z.number().min(-2).max(2)),
  seed: nullable(z.int()),
  stop: nullable(z.union([z.string(), z.array(z.string())])),
  stop_token_ids: nullable(z.array(z.int().min(0))),
  ignore_eos: nullable(z.boolean()),
  max_tokens: nullable(z.int().min(1)),
  n: nullable(z.literal(1, "only 1 is supported")),
  stream: nullable(z.boolean()),
  stream_options: nullable(z.looseObject({ include_usage: nullable(z.boolean()) })),
  skip_special_tokens: nullable(z.boolean()),
  min_tokens: nullable(z.int().min(0)),
  // Tessera's extension: true generates this request without speculative decoding (same distribution).
  disable_speculation: nullable(z.boolean()),
  logit_bias: nullable(
    z
      .record(z.string(), z.number())
      .refine((bias) => Object.keys(bias).length === 0, "logit_bias is not supported"),
  ),
  // OpenAI's fields that do not change the output.
  user: nullable(z.string()),
  metadata: nullable(z.record(z.string(), z.string())),
  service_tier: nullable(z.string()),
  prompt_cache_key: nullable(z.string()),
  safety_identifier: nullable(z.string()),
  store: nullable(z.literal(false, "storing completions is not supported")),
};

const completionSchema = z.strictObject({
  ...common,
  prompt: z.union(
    [
      z.string(),
      z.array(z.string()).length(1),
      z.array(z.int().min(0)).min(1),
      z.array(z.array(z.int().min(0))).length(1),
    ],
    {
      error: "must be a string or a list of token ids (one prompt per request)",
    },
  ),
  logprobs: nullable(z.int().min(0).max(20)),
  echo: nullable(z.literal(false, "echo is not supported")),
  best_of: nullable(z.literal(1, "only 1 is supported")),
  suffix: nullable(z.null({ error: "suffix is not supported" })),
});

const contentPart = z.looseObject({
  type: z.literal("text", "only text content is supported"),
  text: z.string(),
});
const messageSchema = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
});

const chatSchema = z.strictObject({
  ...common,
  messages: z.array(messageSchema).min(1),
  max_completion_tokens: nullable(z.int().min(1)),
  logprobs: nullable(z.boolean()),
  top_logprobs: nullable(z.int().min(0).max(20)),
  tools: nullable(z.array(z.unknown()).max(0, "tools are not supported")),
  tool_choice: nullable(z.literal("none", "tools are not supported")),
  parallel_tool_calls: nullable(z.boolean()),
  response_format: nullable(z.looseObject({ type: z.literal("text", "only text responses are supported") })),
  modalities: nullable(z.array(z.literal("text", "only text output is supported"))),
  // vLLM's extra chat fields (services/inference/chat-template.ts says what each does).
  add_generation_prompt: nullable(z.boolean()),
  continue_final_message: nullable(z.boolean()),
  chat_template_kwargs: nullable(z.record(z.string(), z.unknown())),
  chat_template: nullable(z.string()),
});

export interface OpenAiRequest {
  model: string;
  prompt: RouterPrompt;
  sampling: RawSamplingParams;
  stream: boolean;
  includeUsage: boolean;
  /** Return log probabilities (with this many alternatives). */
  logprobs: number | undefined;
  /** Leave special tokens out of the text (vLLM's skip_special_tokens). */
  skipSpecialTokens: boolean | undefined;
}

type Common = z.infer<z.ZodObject<typeof common>>;

function sampling(
  body: Common,
  maxTokens: number | undefined,
  logprobs: number | undefined,
): RawSamplingParams {
  return {
    maxTokens: maxTokens ?? 16,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k === -1 ? 0 : body.top_k,
    minP: body.min_p,
    repetitionPenalty: body.repetition_penalty,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    seed: body.seed,
    stop: typeof body.stop === "string" ? [body.stop] : body.stop,
    stopTokenIds: body.stop_token_ids,
    ignoreEos: body.ignore_eos,
    minTokens: body.min_tokens,
    disableSpeculation: body.disable_speculation,
    logprobs: logprobs ?? 0,
  };
}

export function parseCompletionRequest(raw: unknown): Result<OpenAiRequest> {
  const parsed = completionSchema.safeParse(raw);
  if (!parsed.success) return invalid(parsed.error, "/v1/completions");
  const body = parsed.data;
  const prompt = body.prompt;
  const first = Array.isArray(prompt) ? prompt[0] : prompt;
  const routerPrompt: RouterPrompt =
    typeof first === "string"
      ? { type: "text", text: first }
      : { type: "tokens", ids: Array.isArray(first) ? first : (prompt as number[]) };
  return { value: toRequest(body, routerPrompt, body.max_tokens, body.logprobs) };
}

export function parseChatRequest(raw: unknown): Result<OpenAiRequest> {
  const parsed = chatSchema.safeParse(raw);
  if (!parsed.success) return invalid(parsed.error, "/v1/chat/completions");
  const body = parsed.data;
  // Text parts are joined with newlines, as vLLM does.
  const messages = body.messages.map((m) => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text).join("\n"),
  }));
  const options = {
    addGenerationPrompt: body.add_generation_prompt,
    continueFinalMessage: body.continue_final_message,
    kwargs: body.chat_template_kwargs,
    template: body.chat_template,
  };
  const logprobs = body.logprobs ? (body.top_logprobs ?? 0) : undefined;
  return {
    value: toRequest(
      body,
      { type: "chat", messages, options },
      body.max_completion_tokens ?? body.max_tokens,
      logprobs,
    ),
  };
}

function toRequest(
  body: Common,
  prompt: RouterPrompt,
  maxTokens: number | undefined,
  logprobs: number | undefined,
): OpenAiRequest {
  return {
    model: body.model ?? "",
    prompt,
    sampling: sampling(body, maxTokens, logprobs),
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    logprobs,
    skipSpecialTokens: body.skip_special_tokens,
  };
}

function invalid(error: z.ZodError, route: string): { error: TesseraError } {
  const issue = error.issues[0];
  if (issue?.code === "unrecognized_keys") {
    const field = [...issue.path.map(String), issue.keys[0]].join(".");
    return { error: TesseraError.invalidArgument(field, `not a parameter of ${route} that Tessera knows`) };
  }
  const field = issue?.path.map(String).join(".") || "body";
  return { error: TesseraError.invalidArgument(field, issue?.message ?? "invalid") };
}

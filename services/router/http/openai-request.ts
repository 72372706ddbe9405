// OpenAI-compatible request bodies (/v1/completions, /v1/chat/completions) as RouterRequests. A field
// Tessera does not know is refused with 400 naming it (`unknown_field: not a parameter of
// /v1/completions`), as OpenAI's own API refuses unrecognized arguments, so nothing a client sends is
// silently dropped (nor inside messages, content parts or stream_options; stream_options without
// stream and top_logprobs without logprobs are refused too); fields Tessera cannot honour (suffix,
// audio, functions...) are refused naming the parameter. response_format and vLLM's guided_* fields
// (structured outputs), n, best_of (completions; not streamed when > n), logit_bias, echo
// (completions) and vLLM's prompt_logprobs are honoured. OpenAI fields that change nothing in the
// output (user, metadata, service_tier, prompt_cache_key, safety_identifier; parallel_tool_calls
// without tools) are accepted. Tools (openai-tools.ts) go to the chat template; a forced tool_choice
// (required, a named function) constrains the output with the JSON Schema tool-choice-schema.ts builds.
// A sampling field the body leaves out (or null) stays unset, so it takes the model's default (its
// generation_config.json, as vLLM does), else OpenAI's (OPENAI_SAMPLING_DEFAULTS: temperature 1;
// max_tokens 16; the rest off); vLLM's extra fields (top_k, min_p, repetition_penalty, ignore_eos,
// stop_token_ids, min_tokens, skip_special_tokens; for chat add_generation_prompt,
// continue_final_message, chat_template_kwargs and chat_template naming one of the model's own templates)
// are honoured. min_tokens must not exceed max_tokens (16 when the body leaves it out, as OpenAI's).
// Structured outputs: response_format (text, json_object, json_schema {name, schema, strict}) on both
// routes, as vLLM accepts it, and vLLM's guided_json, guided_regex, guided_choice and guided_grammar;
// at most one of them constrains a request (two is a 400 naming the second), and a schema, regex or
// grammar that does not compile is a 400 naming its field (the router compiles it before routing).
// Tessera's own extension: disable_speculation (true: no speculative decoding for this request).
import { z } from "zod";
import type { RawSamplingParams, SamplingDefaults } from "../../inference/sampling-params.ts";
import { checkStructured } from "../../inference/structured-output.ts";
import type { StructuredOutput } from "../../inference/types.ts";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import type { RouterPrompt } from "../core/router-request.ts";
import type { ChatMessage } from "../models/chat-template.ts";
import { forcedToolSchema } from "../tools/tool-choice-schema.ts";
import {
  type ToolRequest,
  templateToolCalls,
  templateTools,
  toolCallSchema,
  toolChoiceSchema,
  toolRequest,
  toolSchema,
} from "./openai-tools.ts";

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
  n: nullable(z.int().min(1)),
  stream: nullable(z.boolean()),
  stream_options: nullable(z.strictObject({ include_usage: nullable(z.boolean()) })),
  skip_special_tokens: nullable(z.boolean()),
  min_tokens: nullable(z.int().min(0)),
  // Tessera's extension: true generates this request without speculative decoding (same distribution).
  disable_speculation: nullable(z.boolean()),
  // Token id (a decimal string) -> bias in [-100, 100]; ids are checked against the vocabulary later.
  logit_bias: nullable(z.record(z.string(), z.number())),
  // vLLM's extension: the prompt tokens' logprobs with this many alternatives each.
  prompt_logprobs: nullable(z.int().min(0)),
  // OpenAI's fields that do not change the output.
  user: nullable(z.string()),
  metadata: nullable(z.record(z.string(), z.string())),
  service_tier: nullable(z.string()),
  prompt_cache_key: nullable(z.string()),
  safety_identifier: nullable(z.string()),
  store: nullable(z.literal(false, "storing completions is not supported")),
  // Structured outputs (structuredOf below).
  response_format: nullable(
    z.discriminatedUnion(
      "type",
      [
        z.strictObject({ type: z.literal("text") }),
        z.strictObject({ type: z.literal("json_object") }),
        z.strictObject({
          type: z.literal("json_schema"),
          json_schema: z.strictObject({
            name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 letters, digits, _ or -"),
            description: nullable(z.string()),
            schema: nullable(z.union([z.record(z.string(), z.unknown()), z.boolean()])),
            strict: nullable(z.boolean()),
          }),
        }),
      ],
      { error: "type must be text, json_object or json_schema" },
    ),
  ),
  guided_json: nullable(z.union([z.record(z.string(), z.unknown()), z.string()])),
  guided_regex: nullable(z.string()),
  guided_choice: nullable(z.array(z.string()).min(1)),
  guided_grammar: nullable(z.string()),
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
  echo: nullable(z.boolean()),
  best_of: nullable(z.int().min(1)),
  suffix: nullable(z.null({ error: "suffix is not supported" })),
});

const contentPart = z.strictObject({
  type: z.literal("text", "only text content is supported"),
  text: z.string(),
});
const messageSchema = z.strictObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  name: nullable(z.string()),
  tool_calls: nullable(z.array(toolCallSchema)),
  tool_call_id: nullable(z.string()),
});

const chatSchema = z.strictObject({
  ...common,
  messages: z.array(messageSchema).min(1),
  max_completion_tokens: nullable(z.int().min(1)),
  logprobs: nullable(z.boolean()),
  top_logprobs: nullable(z.int().min(0).max(20)),
  tools: nullable(z.array(toolSchema)),
  tool_choice: nullable(toolChoiceSchema),
  parallel_tool_calls: nullable(z.boolean()),
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
  /** The field that set sampling.structured, for the router's errors about it. */
  structuredField: string | undefined;
  /** Choices returned (n). */
  n: number;
  /** The prompt opens each choice's text (completions' echo); with logprobs, its tokens' logprobs too. */
  echo: boolean;
  /** vLLM's prompt_logprobs (alternatives per prompt token); undefined: not asked. */
  promptLogprobs: number | undefined;
  /** The chat request's tools; undefined without. */
  tools?: ToolRequest | undefined;
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
    logitBias: body.logit_bias,
    n: body.n,
    promptLogprobs: body.prompt_logprobs,
  };
}

/** The one constraint the body sets (response_format text sets none) and the field that set it. */
function structuredOf(body: Common): Result<{ structured: StructuredOutput; field: string } | undefined> {
  const set: { structured: StructuredOutput; field: string }[] = [];
  const format = body.response_format;
  if (format?.type === "json_object")
    set.push({ structured: { kind: "json_object" }, field: "response_format" });
  if (format?.type === "json_schema") {
    const { schema, strict } = format.json_schema;
    set.push({
      // OpenAI's schema is optional: without one, any JSON object.
      structured:
        schema === undefined
          ? { kind: "json_object" }
          : { kind: "json_schema", schema, strict: strict === true },
      field: "response_format.json_schema.schema",
    });
  }
  if (body.guided_json !== undefined) {
    let schema: unknown = body.guided_json;
    if (typeof schema === "string") {
      try {
        schema = JSON.parse(schema);
      } catch {
        return { error: TesseraError.invalidArgument("guided_json", "is not JSON") };
      }
    }
    set.push({ structured: { kind: "json_schema", schema, strict: false }, field: "guided_json" });
  }
  if (body.guided_regex !== undefined)
    set.push({ structured: { kind: "regex", pattern: body.guided_regex }, field: "guided_regex" });
  if (body.guided_choice !== undefined)
    set.push({ structured: { kind: "choice", choices: body.guided_choice }, field: "guided_choice" });
  if (body.guided_grammar !== undefined)
    set.push({ structured: { kind: "grammar", grammar: body.guided_grammar }, field: "guided_grammar" });
  if (set.length > 1) {
    const fields = set.map((s) => s.field.split(".")[0]);
    return {
      error: TesseraError.invalidArgument(
        fields[1]!,
        `only one structured output constraint per request (${fields.join(" and ")} given)`,
      ),
    };
  }
  const one = set[0];
  if (one === undefined) return { value: undefined };
  const checked = checkStructured(one.structured, one.field);
  if (checked.error) return checked;
  return { value: one };
}

export function parseCompletionRequest(raw: unknown): Result<OpenAiRequest> {
  const parsed = completionSchema.safeParse(raw);
  if (!parsed.success) return invalid(parsed.error, "/v1/completions");
  const body = parsed.data;
  if (body.stream_options && body.stream !== true) return unpaired("stream_options", "stream");
  const prompt = body.prompt;
  const first = Array.isArray(prompt) ? prompt[0] : prompt;
  const routerPrompt: RouterPrompt =
    typeof first === "string"
      ? { type: "text", text: first }
      : { type: "tokens", ids: Array.isArray(first) ? first : (prompt as number[]) };
  // best_of > n is chosen once every sequence has finished: there is nothing to stream before (OpenAI
  // refuses it too).
  if (body.stream && (body.best_of ?? 1) > (body.n ?? 1))
    return { error: TesseraError.invalidArgument("best_of", "cannot be streamed when greater than n") };
  const request = toRequest(body, routerPrompt, body.max_tokens, body.logprobs);
  if (request.error) return request;
  const echo = body.echo === true;
  // echo with logprobs returns the prompt tokens' logprobs: the worker computes them as prompt_logprobs.
  const promptLogprobs =
    body.prompt_logprobs ?? (echo && body.logprobs !== undefined ? body.logprobs : undefined);
  return {
    value: {
      ...request.value,
      echo,
      sampling: { ...request.value.sampling, bestOf: body.best_of, echo, promptLogprobs },
    },
  };
}

export function parseChatRequest(raw: unknown): Result<OpenAiRequest> {
  const parsed = chatSchema.safeParse(raw);
  if (!parsed.success) return invalid(parsed.error, "/v1/chat/completions");
  const body = parsed.data;
  if (body.stream_options && body.stream !== true) return unpaired("stream_options", "stream");
  if (body.top_logprobs !== undefined && body.logprobs !== true) return unpaired("top_logprobs", "logprobs");
  const tools = toolRequest(body);
  if (tools.error) return tools;
  const messages: ChatMessage[] = [];
  for (const [i, m] of body.messages.entries()) {
    const message = chatMessage(m, i);
    if (message.error) return message;
    messages.push(message.value);
  }
  const options = {
    addGenerationPrompt: body.add_generation_prompt,
    continueFinalMessage: body.continue_final_message,
    kwargs: body.chat_template_kwargs,
    template: body.chat_template,
    ...(tools.value && { tools: templateTools(tools.value) }),
  };
  const logprobs = body.logprobs ? (body.top_logprobs ?? 0) : undefined;
  const request = toRequest(
    body,
    { type: "chat", messages, options },
    body.max_completion_tokens ?? body.max_tokens,
    logprobs,
  );
  if (request.error || tools.value === undefined) return request;
  const forced = forcedToolSchema(tools.value.choice, tools.value.tools, tools.value.parallel);
  if (forced !== undefined) {
    const other = request.value.structuredField;
    if (other !== undefined)
      return {
        error: TesseraError.invalidArgument(
          "tool_choice",
          `a forced tool choice constrains the output, and so does ${other.split(".")[0]}: give one`,
        ),
      };
    request.value.sampling.structured = forced.structured;
    request.value.structuredField = forced.field;
  }
  return { value: { ...request.value, tools: tools.value } };
}

/** A message as the chat template reads it; text parts are joined with newlines, as vLLM does. */
function chatMessage(m: z.infer<typeof messageSchema>, i: number): Result<ChatMessage> {
  const content = typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text).join("\n");
  const message: ChatMessage = { role: m.role, content };
  if (m.name !== undefined) message.name = m.name;
  if (m.tool_calls !== undefined) {
    if (m.role !== "assistant")
      return {
        error: TesseraError.invalidArgument(`messages.${i}.tool_calls`, "only an assistant makes calls"),
      };
    const calls = templateToolCalls(m.tool_calls, `messages.${i}.tool_calls`);
    if (calls.error) return calls;
    message.tool_calls = calls.value;
  }
  if (m.role !== "tool" && m.tool_call_id !== undefined)
    return {
      error: TesseraError.invalidArgument(`messages.${i}.tool_call_id`, "only a tool message answers a call"),
    };
  if (m.role === "tool") {
    if (m.tool_call_id === undefined)
      return {
        error: TesseraError.invalidArgument(`messages.${i}.tool_call_id`, "a tool message needs one"),
      };
    message.tool_call_id = m.tool_call_id;
  }
  return { value: message };
}

function toRequest(
  body: Common,
  prompt: RouterPrompt,
  maxTokens: number | undefined,
  logprobs: number | undefined,
): Result<OpenAiRequest> {
  const structured = structuredOf(body);
  if (structured.error) return structured;
  return {
    value: {
      model: body.model ?? "",
      prompt,
      sampling: {
        ...sampling(body, maxTokens, logprobs),
        ...(structured.value && { structured: structured.value.structured }),
      },
      stream: body.stream === true,
      includeUsage: body.stream_options?.include_usage === true,
      logprobs,
      skipSpecialTokens: body.skip_special_tokens,
      structuredField: structured.value?.field,
      n: body.n ?? 1,
      echo: false,
      promptLogprobs: body.prompt_logprobs,
    },
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

/** A field that means something only beside another (as OpenAI and vLLM refuse it alone). */
function unpaired(field: string, needs: string): { error: TesseraError } {
  return { error: TesseraError.invalidArgument(field, `is only allowed with ${needs}: true`) };
}

// Request bodies for /v1/completions and /v1/chat/completions. `validCompletion` / `validChat` stay
// inside every documented range (for the tiny test model: 512 tokens of vocabulary and context), so
// the router must answer 200. `fuzzCompletion` / `fuzzChat` set one or two known fields of a valid body
// to any awkward JSON value (json-arbitraries.ts), leave the required field out now and then or add an
// unknown one, so the router must refuse what it cannot take with a 4xx naming the field.
import fc from "fast-check";
import { anyValue, nastyString } from "./json-arbitraries.ts";

export type Body = Record<string, unknown>;

const VOCAB = 512;
const tokenId = fc.integer({ min: 0, max: VOCAB - 1 });
// Short: a grapheme may be several byte-level tokens, and a valid prompt must fit 512 tokens.
const text = fc.string({ unit: "grapheme", maxLength: 12 });
const stopString = fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 });

/** Valid values of the fields both routes take (max_tokens small, to keep each case quick). */
const common = {
  model: fc.constantFrom("tiny-llama", null),
  temperature: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 2, noNaN: true })),
  top_p: fc.double({ min: Number.EPSILON, max: 1, noNaN: true }),
  top_k: fc.integer({ min: -1, max: 600 }),
  min_p: fc.double({ min: 0, max: 1, noNaN: true }),
  repetition_penalty: fc.double({ min: 0.01, max: 3, noNaN: true }),
  presence_penalty: fc.double({ min: -2, max: 2, noNaN: true }),
  frequency_penalty: fc.double({ min: -2, max: 2, noNaN: true }),
  seed: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  stop: fc.oneof(stopString, fc.array(stopString, { maxLength: 4 })),
  stop_token_ids: fc.array(tokenId, { maxLength: 4 }),
  ignore_eos: fc.boolean(),
  max_tokens: fc.integer({ min: 1, max: 6 }),
  n: fc.constant(1),
  stream: fc.boolean(),
  skip_special_tokens: fc.boolean(),
  logit_bias: fc.constant({}),
  user: text,
  metadata: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), text, { maxKeys: 3 }),
  service_tier: fc.constantFrom("auto", "default"),
  prompt_cache_key: text,
  safety_identifier: text,
  store: fc.constant(false),
};

const completionOnly = {
  prompt: fc.oneof(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
    fc.tuple(fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 })),
    fc.array(tokenId, { minLength: 1, maxLength: 60 }),
    fc.tuple(fc.array(tokenId, { minLength: 1, maxLength: 60 })),
  ),
  logprobs: fc.integer({ min: 0, max: 20 }),
  echo: fc.constant(false),
  best_of: fc.constant(1),
  suffix: fc.constant(null),
};

const content = fc.oneof(
  text,
  fc.array(fc.record({ type: fc.constant("text"), text }), { minLength: 1, maxLength: 3 }),
);
/** A conversation the tiny model's template accepts: an optional system turn, then user and assistant in turn. */
const messages = fc
  .tuple(
    fc.option(content, { nil: undefined }),
    fc.array(fc.tuple(content, content), { maxLength: 2 }),
    content,
  )
  .map(([system, turns, last]) => [
    ...(system === undefined ? [] : [{ role: "system", content: system }]),
    ...turns.flatMap(([user, assistant]) => [
      { role: "user", content: user },
      { role: "assistant", content: assistant },
    ]),
    { role: "user", content: last },
  ]);

const chatOnly = {
  messages,
  max_completion_tokens: fc.integer({ min: 1, max: 6 }),
  logprobs: fc.boolean(),
  top_logprobs: fc.integer({ min: 0, max: 20 }),
  // tools stay out of valid bodies: present without a tool_choice they mean "auto", which the tiny
  // model's template (no tool-call format) refuses, and an empty list is refused as OpenAI does.
  tool_choice: fc.constant("none"),
  parallel_tool_calls: fc.boolean(),
  response_format: fc.constant({ type: "text" }),
  modalities: fc.constant(["text"]),
  add_generation_prompt: fc.boolean(),
  chat_template_kwargs: fc.constant({}),
};

type Fields = Record<string, fc.Arbitrary<unknown>>;

/** Bodies whose present fields are all valid, and consistent with one another. */
function valid(fields: Fields, required: string): fc.Arbitrary<Body> {
  return fc.record(fields, { requiredKeys: [required] }).map((body) => {
    const b: Body = { ...body };
    if (b["stream"] === true && typeof b["max_tokens"] === "number")
      b["stream_options"] = { include_usage: true };
    // min_tokens may not exceed max_tokens (16 when left out).
    const max = (b["max_completion_tokens"] ?? b["max_tokens"] ?? 16) as number;
    b["min_tokens"] = Math.min(max, 2);
    // top_logprobs is for logprobs: true.
    if (b["logprobs"] !== true) delete b["top_logprobs"];
    return b;
  });
}

export const validCompletion = valid({ ...common, ...completionOnly }, "prompt");
export const validChat = valid({ ...common, ...chatOnly }, "messages");

/** Field names no OpenAI route knows, and ones that look like prototypes. */
const unknownKey = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "toString", "max-tokens", "Temperature", "prompt ", ""),
  nastyString,
);

/**
 * A valid body with one or two fields (known ones, the required one included) set to any value; now
 * and then the required field left out, or an unknown field added.
 */
function fuzz(fields: Fields, required: string): fc.Arbitrary<Body> {
  const names = Object.keys(fields);
  return fc
    .tuple(
      valid(fields, required),
      fc.array(fc.tuple(fc.constantFrom(...names), anyValue), { minLength: 1, maxLength: 2 }),
      fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant("drop") },
        { weight: 1, arbitrary: fc.tuple(unknownKey, anyValue) },
      ),
    )
    .map(([body, corrupted, extra]) => {
      const b: Body = { ...body };
      for (const [name, value] of corrupted) b[name] = value;
      if (extra === "drop") delete b[required];
      else if (extra) Object.defineProperty(b, extra[0], { value: extra[1], enumerable: true });
      return b;
    });
}

export const fuzzCompletion = fuzz({ ...common, ...completionOnly }, "prompt");
export const fuzzChat = fuzz({ ...common, ...chatOnly }, "messages");

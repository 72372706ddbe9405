// Random tessera.v1.Inference requests: valid messages with up to three fields set to any value of
// their proto type (NaN and
// infinite floats, negative and huge integers, 64-bit seeds, awkward strings, every prompt case or
// none, kv and priority set by a client), and raw bytes sent as the message payload (random, or a
// valid encoding truncated or with bytes flipped). `callRaw` sends bytes with identity serializers.
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { type Client, Metadata, type ServiceError, type StatusObject, status } from "@grpc/grpc-js";
import fc from "fast-check";
import { GenerateRequestSchema } from "../../proto/gen/tessera/v1/inference_pb.js";
import { nastyString } from "./json-arbitraries.ts";

export type GenerateInit = MessageInitShape<typeof GenerateRequestSchema>;

const float32 = fc.oneof(
  fc.float(),
  fc.constantFrom(0, -0, 0.5, 1, 2, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);
const int32 = fc.oneof(fc.integer({ min: -3, max: 24 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
const uint32 = fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }));
/** Short generations most of the time: a long one is valid but slow. */
const maxTokens = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -2, max: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) },
);

/** Any value of each field (of its proto type). */
const anySampling = {
  maxTokens,
  temperature: float32,
  topP: float32,
  topK: int32,
  seed: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  stop: fc.array(nastyString, { maxLength: 20 }),
  stopTokenIds: fc.array(uint32, { maxLength: 6 }),
  ignoreEos: fc.boolean(),
  logprobs: int32,
  minP: float32,
  repetitionPenalty: float32,
  presencePenalty: float32,
  frequencyPenalty: float32,
  minTokens: uint32,
  disableSpeculation: fc.boolean(),
};

/** Values in range for the tiny model (512 tokens of vocabulary and context), short generations. */
const tokenId = fc.integer({ min: 0, max: 511 });
const unit = fc.double({ min: 0, max: 1, noNaN: true });
const validSampling = {
  maxTokens: fc.integer({ min: 0, max: 6 }),
  temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  topP: unit,
  topK: fc.integer({ min: 0, max: 600 }),
  seed: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  stop: fc.array(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), { maxLength: 4 }),
  stopTokenIds: fc.array(tokenId, { maxLength: 4 }),
  ignoreEos: fc.boolean(),
  logprobs: fc.integer({ min: 0, max: 20 }),
  minP: unit,
  repetitionPenalty: fc.double({ min: 0, max: 3, noNaN: true }),
  presencePenalty: fc.double({ min: -2, max: 2, noNaN: true }),
  frequencyPenalty: fc.double({ min: -2, max: 2, noNaN: true }),
  minTokens: fc.integer({ min: 0, max: 0 }),
  disableSpeculation: fc.boolean(),
};

const struct = fc.dictionary(nastyString, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 });
const anyChat = fc.record(
  {
    messages: fc.array(
      fc.record({
        role: fc.oneof(fc.constantFrom("user", "system", "assistant", "tool", ""), nastyString),
        content: nastyString,
      }),
      { maxLength: 4 },
    ),
    addGenerationPrompt: fc.boolean(),
    continueFinalMessage: fc.boolean(),
    chatTemplateKwargs: struct,
    chatTemplate: fc.oneof(fc.constantFrom("", "default", "tool_use"), nastyString),
  },
  { requiredKeys: ["messages"] },
);
// Short: a grapheme may be several byte-level tokens, and a valid prompt must fit 512 tokens.
const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 });
const validChat = fc.record({
  messages: fc.array(fc.tuple(text, text), { maxLength: 2 }).chain((turns) =>
    text.map((last) => [
      ...turns.flatMap(([user, assistant]) => [
        { role: "user", content: user },
        { role: "assistant", content: assistant },
      ]),
      { role: "user", content: last },
    ]),
  ),
});

const anyPrompt = fc.oneof(
  fc.record({ case: fc.constant("text" as const), value: nastyString }),
  fc.record({
    case: fc.constant("tokenIds" as const),
    value: fc.record({ ids: fc.array(uint32, { maxLength: 40 }) }),
  }),
  fc.record({ case: fc.constant("chat" as const), value: anyChat }),
  fc.constant({ case: undefined }),
);
const validPrompt = fc.oneof(
  fc.record({ case: fc.constant("text" as const), value: text }),
  fc.record({
    case: fc.constant("tokenIds" as const),
    value: fc.record({ ids: fc.array(tokenId, { minLength: 1, maxLength: 40 }) }),
  }),
  fc.record({ case: fc.constant("chat" as const), value: validChat }),
);

/** Any value of each top-level field; `sampling.<name>` for the sampling fields. */
const anyFields: Record<string, fc.Arbitrary<unknown>> = {
  model: fc.oneof(fc.constantFrom("", "tiny-llama"), nastyString),
  prompt: anyPrompt,
  requestId: nastyString,
  priority: int32,
  kv: fc.record({ expectedRemoteBlocks: uint32, awaitWrites: fc.boolean() }, { requiredKeys: [] }),
  ...Object.fromEntries(Object.entries(anySampling).map(([k, v]) => [`sampling.${k}`, v])),
};

/** A valid request, then one to three fields (sampling ones included) set to any value of their type. */
// (A chat_template_kwargs dictionary is a google.protobuf.Struct's JSON: the cast says so.)
export const generateRequest = fc
  .tuple(
    fc.record({
      model: fc.constantFrom("", "tiny-llama"),
      prompt: validPrompt,
      sampling: fc.record(validSampling, { requiredKeys: [] }),
      requestId: fc.string(),
    }),
    fc.array(
      fc.constantFrom(...Object.keys(anyFields)).chain((k) => fc.tuple(fc.constant(k), anyFields[k]!)),
      {
        maxLength: 3,
      },
    ),
  )
  .map(([valid, corrupted]) => {
    const request: Record<string, unknown> = { ...valid, sampling: { ...valid.sampling } };
    for (const [key, value] of corrupted) {
      if (key.startsWith("sampling.")) (request["sampling"] as Record<string, unknown>)[key.slice(9)] = value;
      else request[key] = value;
    }
    return request;
  }) as unknown as fc.Arbitrary<GenerateInit>;

/** Random bytes, or a valid request's encoding cut short or with bytes overwritten. */
export const rawPayload: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc
    .tuple(
      generateRequest,
      fc.nat(),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
    )
    .map(([request, cut, flips]) => {
      const bytes = toBinary(GenerateRequestSchema, create(GenerateRequestSchema, request));
      const out = bytes.slice(0, bytes.length === 0 ? 0 : cut % (bytes.length + 1));
      for (const [at, value] of flips) if (out.length > 0) out[at % out.length] = value;
      return out;
    }),
);

export interface CallResult {
  code: number;
  details: string;
  messages: number;
}

/** Calls `path` with `payload` as the message bytes (identity serializers); the status it ended with. */
export function callRaw(
  client: Client,
  path: string,
  payload: Uint8Array,
  streaming: boolean,
): Promise<CallResult> {
  const identity = (b: Buffer) => b;
  const options = { deadline: Date.now() + 60_000 };
  const bytes = Buffer.from(payload);
  return new Promise((resolve) => {
    const done = (err: ServiceError | null, messages: number) =>
      resolve({ code: err?.code ?? status.OK, details: err?.details ?? "", messages });
    if (!streaming) {
      client.makeUnaryRequest(path, identity, identity, bytes, new Metadata(), options, (err) =>
        done(err, 1),
      );
      return;
    }
    let messages = 0;
    const call = client.makeServerStreamRequest(path, identity, identity, bytes, new Metadata(), options);
    call.on("data", () => messages++);
    call.on("error", () => {}); // the status below says it
    call.on("status", (s: StatusObject) => resolve({ code: s.code, details: s.details, messages }));
  });
}

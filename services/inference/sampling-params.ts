// Validation of a request's sampling parameters into the engine's SamplingParams.
//
// temperature, top_p, top_k, min_p and repetition_penalty may be unset (undefined; optional in the proto):
// an unset one takes the model's default (SamplingDefaults, from the checkpoint's generation_config.json),
// else the front door's (the OpenAI API's temperature 1), else the neutral value. Set, zero means "off" as
// the proto says: temperature 0 -> greedy, top_p 0 -> 1 (off), top_k 0 -> off, min_p 0 -> off,
// repetition_penalty 0 -> 1 (off). The other fields are plain proto3 scalars, where unset reads as zero:
// max_tokens 0 -> the default (16), logprobs 0 -> none, presence_penalty / frequency_penalty 0 -> off,
// min_tokens 0 -> off (it must not exceed max_tokens, the default one when max_tokens is 0).
// Errors name the field as the API spells it (snake_case).
import { type Result, TesseraError } from "../kernel/errors.ts";
import { checkStructured } from "./structured-output.ts";
import type { SamplingParams, StructuredOutput } from "./types.ts";

export const DEFAULT_MAX_TOKENS = 16;
export const MAX_LOGPROBS = 20;
export const MAX_STOP_STRINGS = 16;
/** Longest stop string, in UTF-16 code units: holding back text costs O(length^2) per delta. */
export const MAX_STOP_STRING_LENGTH = 256;
const MAX_SEED = (1n << 64n) - 1n;
/**
 * The proto's int32 top_k and float repetition_penalty (the router sends them on to a worker): a
 * larger value cannot be encoded, and failed the worker call (and the relay stream it shared with
 * other requests) instead of being refused (found by fuzzing the OpenAI door).
 */
const INT32_MAX = 2 ** 31 - 1;
const FLOAT32_MAX = 3.4028234663852886e38;
/** presence_penalty and frequency_penalty lie in [-MAX_PENALTY, MAX_PENALTY] (as in OpenAI's API and vLLM). */
export const MAX_PENALTY = 2;
/** logit_bias values lie in [-MAX_LOGIT_BIAS, MAX_LOGIT_BIAS] (OpenAI's range). */
export const MAX_LOGIT_BIAS = 100;
/** Most sequences one request may ask for (n, best_of): they share one prefill but each takes a KV tail. */
export const MAX_SEQUENCES = 16;

/** Sampling parameters as they arrive (proto3 message or CLI flags); every field optional. */
export interface RawSamplingParams {
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  minP?: number | undefined;
  repetitionPenalty?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  seed?: bigint | number | undefined;
  stop?: readonly string[] | undefined;
  stopTokenIds?: readonly number[] | undefined;
  ignoreEos?: boolean | undefined;
  minTokens?: number | undefined;
  logprobs?: number | undefined;
  disableSpeculation?: boolean | undefined;
  /** Structured output (already in the engine's shape: front doors convert theirs). */
  structured?: StructuredOutput | undefined;
  structuredMatchedTokens?: number | undefined;
  /** Token id (a number, or its decimal string as OpenAI's JSON keys are) -> bias. */
  logitBias?: Readonly<Record<string | number, number>> | ReadonlyMap<number, number> | undefined;
  promptLogprobs?: number | undefined;
  n?: number | undefined;
  bestOf?: number | undefined;
  echo?: boolean | undefined;
  skipSpecialTokens?: boolean | undefined;
}

/**
 * What an unset temperature, top_p, top_k, min_p or repetition_penalty means: a model's recommendation
 * (generation_config.json, read by the worker) layered over a front door's convention. Every value is
 * already valid (the same ranges as a request's).
 */
export interface SamplingDefaults {
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  minP?: number | undefined;
  repetitionPenalty?: number | undefined;
}

/** The fields of SamplingDefaults, as the API spells them. */
export const SAMPLING_DEFAULT_FIELDS = {
  temperature: "temperature",
  topP: "top_p",
  topK: "top_k",
  minP: "min_p",
  repetitionPenalty: "repetition_penalty",
} as const satisfies Record<keyof SamplingDefaults, string>;

/** The defaults keyed as the API spells them (`{ temperature: 0.6, top_p: 0.95 }`), for logs and model listings. */
export function samplingDefaultsByApiName(defaults: SamplingDefaults): Record<string, number> {
  const named: Record<string, number> = {};
  for (const [key, name] of Object.entries(SAMPLING_DEFAULT_FIELDS)) {
    const value = defaults[key as keyof SamplingDefaults];
    if (value !== undefined) named[name] = value;
  }
  return named;
}

export interface SamplingLimits {
  /** Size of the model's vocabulary: stop_token_ids must lie in 0..vocabSize-1. */
  vocabSize: number;
}

function invalid(field: string, message: string): { error: TesseraError } {
  return { error: TesseraError.invalidArgument(field, message) };
}

/** An error message when `value` is not a finite number (or, with `integer`, not an integer). */
function notNumber(value: number, integer: boolean): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return "must be a finite number";
  if (integer && !Number.isInteger(value)) return "must be an integer";
  return undefined;
}

/**
 * The parameters of a request that sets nothing but `overrides`: greedy, no filter, no penalty, no stop,
 * max_tokens 16. For programs that build requests without going through the API (tests, benchmarks).
 */
export function greedySampling(overrides: Partial<SamplingParams> = {}): SamplingParams {
  return {
    maxTokens: DEFAULT_MAX_TOKENS,
    temperature: 0,
    topP: 1,
    topK: 0,
    minP: 0,
    repetitionPenalty: 1,
    presencePenalty: 0,
    frequencyPenalty: 0,
    seed: undefined,
    stop: [],
    stopTokenIds: [],
    ignoreEos: false,
    minTokens: 0,
    logprobs: 0,
    ...overrides,
  };
}

/**
 * Checks `raw` and fills in defaults (`defaults` for the fields it covers); the first problem found is
 * returned as INVALID_ARGUMENT.
 */
export function parseSamplingParams(
  raw: RawSamplingParams,
  limits: SamplingLimits,
  defaults: SamplingDefaults = {},
): Result<SamplingParams> {
  const maxTokens = raw.maxTokens ?? 0;
  const maxTokensProblem = notNumber(maxTokens, true);
  if (maxTokensProblem) return invalid("max_tokens", maxTokensProblem);
  if (maxTokens < 0) return invalid("max_tokens", "must be > 0");

  const temperature = raw.temperature ?? defaults.temperature ?? 0;
  const temperatureProblem = notNumber(temperature, false);
  if (temperatureProblem) return invalid("temperature", temperatureProblem);
  if (temperature < 0) return invalid("temperature", "must be >= 0");

  const topP = raw.topP ?? defaults.topP ?? 0;
  const topPProblem = notNumber(topP, false);
  if (topPProblem) return invalid("top_p", topPProblem);
  if (topP < 0 || topP > 1) return invalid("top_p", "must be in (0, 1]");

  const topK = raw.topK ?? defaults.topK ?? 0;
  const topKProblem = notNumber(topK, true);
  if (topKProblem) return invalid("top_k", topKProblem);
  if (topK < 0) return invalid("top_k", "must be >= 0");
  if (topK > INT32_MAX) return invalid("top_k", `must be <= ${INT32_MAX}`);

  const minP = raw.minP ?? defaults.minP ?? 0;
  const minPProblem = notNumber(minP, false);
  if (minPProblem) return invalid("min_p", minPProblem);
  if (minP < 0 || minP > 1) return invalid("min_p", "must be in [0, 1]");

  const repetitionPenalty = raw.repetitionPenalty ?? defaults.repetitionPenalty ?? 0;
  const repetitionProblem = notNumber(repetitionPenalty, false);
  if (repetitionProblem) return invalid("repetition_penalty", repetitionProblem);
  if (repetitionPenalty < 0) return invalid("repetition_penalty", "must be > 0");
  if (repetitionPenalty > FLOAT32_MAX) return invalid("repetition_penalty", `must be <= ${FLOAT32_MAX}`);

  const presencePenalty = raw.presencePenalty ?? 0;
  const presenceProblem = notNumber(presencePenalty, false);
  if (presenceProblem) return invalid("presence_penalty", presenceProblem);
  if (Math.abs(presencePenalty) > MAX_PENALTY) {
    return invalid("presence_penalty", `must be in [-${MAX_PENALTY}, ${MAX_PENALTY}]`);
  }

  const frequencyPenalty = raw.frequencyPenalty ?? 0;
  const frequencyProblem = notNumber(frequencyPenalty, false);
  if (frequencyProblem) return invalid("frequency_penalty", frequencyProblem);
  if (Math.abs(frequencyPenalty) > MAX_PENALTY) {
    return invalid("frequency_penalty", `must be in [-${MAX_PENALTY}, ${MAX_PENALTY}]`);
  }

  let seed: bigint | undefined;
  if (raw.seed !== undefined) {
    if (typeof raw.seed === "number") {
      const seedProblem = notNumber(raw.seed, true);
      if (seedProblem) return invalid("seed", seedProblem);
      if (!Number.isSafeInteger(raw.seed))
        return invalid("seed", "must be a safe integer when given as a number");
      seed = BigInt(raw.seed);
    } else if (typeof raw.seed === "bigint") {
      seed = raw.seed;
    } else {
      return invalid("seed", "must be an integer");
    }
    if (seed < 0n || seed > MAX_SEED) return invalid("seed", "must be in 0..2^64-1");
  }

  const stop = [...(raw.stop ?? [])];
  if (stop.length > MAX_STOP_STRINGS) return invalid("stop", `at most ${MAX_STOP_STRINGS} stop strings`);
  for (const [i, s] of stop.entries()) {
    if (typeof s !== "string") return invalid("stop", `entry ${i} must be a string`);
    if (s.length === 0) return invalid("stop", `entry ${i} must not be empty`);
    if (s.length > MAX_STOP_STRING_LENGTH) {
      return invalid("stop", `entry ${i} is longer than ${MAX_STOP_STRING_LENGTH} characters`);
    }
    if (!s.isWellFormed()) return invalid("stop", `entry ${i} is not valid Unicode`);
  }

  const stopTokenIds: number[] = [];
  for (const id of raw.stopTokenIds ?? []) {
    if (!(Number.isInteger(id) && id >= 0 && id < limits.vocabSize)) {
      return invalid("stop_token_ids", `${id} is outside the vocabulary (0..${limits.vocabSize - 1})`);
    }
    if (!stopTokenIds.includes(id)) stopTokenIds.push(id);
  }

  const logprobs = raw.logprobs ?? 0;
  const logprobsProblem = notNumber(logprobs, true);
  if (logprobsProblem) return invalid("logprobs", logprobsProblem);
  if (logprobs < 0 || logprobs > MAX_LOGPROBS) return invalid("logprobs", `must be in 0..${MAX_LOGPROBS}`);

  const ignoreEos = raw.ignoreEos ?? false;
  if (typeof ignoreEos !== "boolean") return invalid("ignore_eos", "must be a boolean");

  const effectiveMaxTokens = maxTokens === 0 ? DEFAULT_MAX_TOKENS : maxTokens;
  const minTokens = raw.minTokens ?? 0;
  const minTokensProblem = notNumber(minTokens, true);
  if (minTokensProblem) return invalid("min_tokens", minTokensProblem);
  if (minTokens < 0) return invalid("min_tokens", "must be >= 0");
  if (minTokens > effectiveMaxTokens) {
    return invalid("min_tokens", `must be <= max_tokens (${effectiveMaxTokens})`);
  }

  const disableSpeculation = raw.disableSpeculation ?? false;
  if (typeof disableSpeculation !== "boolean") return invalid("disable_speculation", "must be a boolean");
  let structured: StructuredOutput | undefined;
  if (raw.structured !== undefined) {
    const checked = checkStructured(raw.structured, "structured");
    if (checked.error) return checked;
    structured = checked.value;
  }
  const matched = raw.structuredMatchedTokens ?? 0;
  if (!(Number.isInteger(matched) && matched >= 0))
    return invalid("structured.matched_tokens", "must be an integer >= 0");
  if (matched > 0 && structured === undefined)
    return invalid("structured.matched_tokens", "needs a constraint");
  const logitBias = parseLogitBias(raw.logitBias, limits.vocabSize);
  if (logitBias.error) return logitBias;

  // echo with logprobs returns the prompt tokens' logprobs too (OpenAI's echo): as prompt_logprobs.
  let promptLogprobs: number | undefined =
    raw.echo === true && logprobs > 0 && raw.promptLogprobs === undefined ? logprobs : undefined;
  if (raw.promptLogprobs !== undefined) {
    promptLogprobs = raw.promptLogprobs;
    const problem = notNumber(promptLogprobs, true);
    if (problem) return invalid("prompt_logprobs", problem);
    if (promptLogprobs < 0 || promptLogprobs > MAX_LOGPROBS)
      return invalid("prompt_logprobs", `must be in 0..${MAX_LOGPROBS}`);
  }

  const n = raw.n || 1;
  const nProblem = notNumber(n, true);
  if (nProblem) return invalid("n", nProblem);
  if (n < 1 || n > MAX_SEQUENCES) return invalid("n", `must be in 1..${MAX_SEQUENCES}`);
  const bestOf = raw.bestOf || n;
  const bestOfProblem = notNumber(bestOf, true);
  if (bestOfProblem) return invalid("best_of", bestOfProblem);
  if (bestOf < n || bestOf > MAX_SEQUENCES)
    return invalid("best_of", `must be in n..${MAX_SEQUENCES} (n is ${n})`);
  const echo = raw.echo ?? false;
  if (typeof echo !== "boolean") return invalid("echo", "must be a boolean");
  const skipSpecialTokens = raw.skipSpecialTokens ?? false;
  if (typeof skipSpecialTokens !== "boolean") return invalid("skip_special_tokens", "must be a boolean");

  return {
    value: {
      ...(disableSpeculation && { disableSpeculation }),
      maxTokens: effectiveMaxTokens,
      temperature,
      topP: topP === 0 ? 1 : topP,
      topK,
      minP,
      repetitionPenalty: repetitionPenalty === 0 ? 1 : repetitionPenalty,
      presencePenalty,
      frequencyPenalty,
      seed,
      stop,
      stopTokenIds,
      ignoreEos,
      minTokens,
      logprobs,
      ...(structured && { structured }),
      ...(matched > 0 && { structuredMatchedTokens: matched }),
      ...(logitBias.value && { logitBias: logitBias.value }),
      ...(promptLogprobs !== undefined && { promptLogprobs }),
      ...(n > 1 && { n }),
      ...(bestOf > n && { bestOf }),
      ...(echo && { echo }),
      ...(skipSpecialTokens && { skipSpecialTokens }),
    },
  };
}

/** The bias of each id (unset when there is none), checked against the vocabulary and OpenAI's range. */
function parseLogitBias(
  raw: RawSamplingParams["logitBias"],
  vocabSize: number,
): Result<Map<number, number> | undefined> {
  if (raw === undefined) return { value: undefined };
  if (typeof raw !== "object" || raw === null) return invalid("logit_bias", "must map token ids to biases");
  const entries = raw instanceof Map ? [...raw] : Object.entries(raw);
  const bias = new Map<number, number>();
  for (const [key, value] of entries) {
    const id = typeof key === "number" ? key : /^\d+$/.test(key) ? Number(key) : Number.NaN;
    if (!(Number.isSafeInteger(id) && id >= 0 && id < vocabSize))
      return invalid(
        "logit_bias",
        `key ${JSON.stringify(String(key))} is not a token id of the vocabulary (0..${vocabSize - 1})`,
      );
    if (typeof value !== "number" || !Number.isFinite(value) || Math.abs(value) > MAX_LOGIT_BIAS)
      return invalid(
        "logit_bias",
        `the bias of ${id} must be a number in [-${MAX_LOGIT_BIAS}, ${MAX_LOGIT_BIAS}]`,
      );
    if (value !== 0) bias.set(id, value);
  }
  return { value: bias.size > 0 ? bias : undefined };
}

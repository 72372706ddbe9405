import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { DEFAULT_MAX_TOKENS, parseSamplingParams, type RawSamplingParams } from "./sampling-params.ts";

const limits = { vocabSize: 32_000 };

function errorOf(raw: RawSamplingParams): string {
  const result = parseSamplingParams(raw, limits);
  assert.ok(
    result.error,
    `expected an error for ${JSON.stringify(raw, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}`,
  );
  assert.equal(result.error.code, Code.INVALID_ARGUMENT);
  return result.error.message;
}

describe("parseSamplingParams", () => {
  it("fills defaults for an empty request (proto3 zero = unset)", () => {
    const expected = {
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
    };
    assert.deepEqual(parseSamplingParams({}, limits).value, expected);
    const zeros = {
      maxTokens: 0,
      temperature: 0,
      topP: 0,
      topK: 0,
      minP: 0,
      repetitionPenalty: 0,
      presencePenalty: 0,
      frequencyPenalty: 0,
      stop: [],
      stopTokenIds: [],
      minTokens: 0,
      logprobs: 0,
    };
    assert.deepEqual(parseSamplingParams(zeros, limits).value, expected);
  });

  it("keeps valid values", () => {
    const result = parseSamplingParams(
      {
        maxTokens: 100,
        temperature: 0.7,
        topP: 0.9,
        topK: 40,
        minP: 0.05,
        repetitionPenalty: 1.3,
        presencePenalty: -0.5,
        frequencyPenalty: 2,
        seed: 42n,
        stop: ["\n\n", "User:"],
        stopTokenIds: [2, 31_999, 2],
        ignoreEos: true,
        minTokens: 7,
        logprobs: 20,
      },
      limits,
    );
    assert.deepEqual(result.value, {
      maxTokens: 100,
      temperature: 0.7,
      topP: 0.9,
      topK: 40,
      minP: 0.05,
      repetitionPenalty: 1.3,
      presencePenalty: -0.5,
      frequencyPenalty: 2,
      seed: 42n,
      stop: ["\n\n", "User:"],
      stopTokenIds: [2, 31_999],
      ignoreEos: true,
      minTokens: 7,
      logprobs: 20,
    });
  });

  it("gives an unset field the model's default, and an explicit zero its 'off' meaning", () => {
    const defaults = { temperature: 0.6, topP: 0.95, topK: 20, minP: 0.01, repetitionPenalty: 1.1 };
    const unset = parseSamplingParams({}, limits, defaults).value;
    assert.deepEqual(
      [unset?.temperature, unset?.topP, unset?.topK, unset?.minP, unset?.repetitionPenalty],
      [0.6, 0.95, 20, 0.01, 1.1],
    );
    const off = parseSamplingParams(
      { temperature: 0, topP: 0, topK: 0, minP: 0, repetitionPenalty: 0 },
      limits,
      defaults,
    ).value;
    assert.deepEqual(
      [off?.temperature, off?.topP, off?.topK, off?.minP, off?.repetitionPenalty],
      [0, 1, 0, 0, 1],
    );
    const mixed = parseSamplingParams({ temperature: 1.5, topK: 5 }, limits, defaults).value;
    assert.deepEqual([mixed?.temperature, mixed?.topK, mixed?.topP], [1.5, 5, 0.95]);
    // Only the five sampling knobs have model defaults; the rest keep theirs.
    assert.deepEqual([unset?.maxTokens, unset?.presencePenalty, unset?.logprobs], [DEFAULT_MAX_TOKENS, 0, 0]);
  });

  it("accepts seeds as numbers or bigints over the full uint64 range", () => {
    assert.equal(parseSamplingParams({ seed: 0 }, limits).value?.seed, 0n);
    assert.equal(parseSamplingParams({ seed: 7 }, limits).value?.seed, 7n);
    assert.equal(parseSamplingParams({ seed: (1n << 64n) - 1n }, limits).value?.seed, (1n << 64n) - 1n);
  });

  it("does not share arrays with the caller", () => {
    const stop = ["a"];
    const value = parseSamplingParams({ stop }, limits).value;
    stop.push("b");
    assert.deepEqual(value?.stop, ["a"]);
  });

  it("rejects out-of-range numbers, naming the field in snake_case", () => {
    assert.equal(errorOf({ maxTokens: -1 }), "max_tokens: must be > 0");
    assert.equal(errorOf({ maxTokens: 1.5 }), "max_tokens: must be an integer");
    assert.equal(errorOf({ temperature: -0.1 }), "temperature: must be >= 0");
    assert.equal(errorOf({ topP: -0.5 }), "top_p: must be in (0, 1]");
    assert.equal(errorOf({ topP: 1.01 }), "top_p: must be in (0, 1]");
    assert.equal(errorOf({ topK: -1 }), "top_k: must be >= 0");
    assert.equal(errorOf({ topK: 2.5 }), "top_k: must be an integer");
    assert.equal(errorOf({ logprobs: -1 }), "logprobs: must be in 0..20");
    assert.equal(errorOf({ logprobs: 21 }), "logprobs: must be in 0..20");
    assert.equal(errorOf({ seed: -1n }), "seed: must be in 0..2^64-1");
    assert.equal(errorOf({ seed: 1n << 64n }), "seed: must be in 0..2^64-1");
    assert.equal(errorOf({ seed: 1.5 }), "seed: must be an integer");
    assert.equal(errorOf({ seed: 2 ** 60 }), "seed: must be a safe integer when given as a number");
    assert.equal(errorOf({ minP: -0.01 }), "min_p: must be in [0, 1]");
    assert.equal(errorOf({ minP: 1.01 }), "min_p: must be in [0, 1]");
    assert.equal(errorOf({ repetitionPenalty: -1 }), "repetition_penalty: must be > 0");
    // Values the proto's int32 / float cannot carry to a worker (found by fuzzing).
    assert.equal(errorOf({ topK: 2 ** 31 }), "top_k: must be <= 2147483647");
    assert.equal(
      errorOf({ repetitionPenalty: 1e308 }),
      "repetition_penalty: must be <= 3.4028234663852886e+38",
    );
    assert.equal(errorOf({ presencePenalty: 2.01 }), "presence_penalty: must be in [-2, 2]");
    assert.equal(errorOf({ presencePenalty: -2.5 }), "presence_penalty: must be in [-2, 2]");
    assert.equal(errorOf({ frequencyPenalty: 3 }), "frequency_penalty: must be in [-2, 2]");
    assert.equal(errorOf({ frequencyPenalty: -2.01 }), "frequency_penalty: must be in [-2, 2]");
  });

  it("accepts the bounds of min_p and the penalties; repetition_penalty 0 means 1 (off)", () => {
    const bounds = parseSamplingParams(
      { minP: 1, repetitionPenalty: 0.5, presencePenalty: -2, frequencyPenalty: 2 },
      limits,
    ).value;
    assert.equal(bounds?.minP, 1);
    assert.equal(bounds?.repetitionPenalty, 0.5);
    assert.equal(bounds?.presencePenalty, -2);
    assert.equal(bounds?.frequencyPenalty, 2);
    assert.equal(parseSamplingParams({ repetitionPenalty: 0 }, limits).value?.repetitionPenalty, 1);
    assert.equal(parseSamplingParams({ repetitionPenalty: 1e-3 }, limits).value?.repetitionPenalty, 1e-3);
  });

  it("rejects non-finite numbers", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      assert.equal(errorOf({ maxTokens: bad }), "max_tokens: must be a finite number");
      assert.equal(errorOf({ temperature: bad }), "temperature: must be a finite number");
      assert.equal(errorOf({ topP: bad }), "top_p: must be a finite number");
      assert.equal(errorOf({ topK: bad }), "top_k: must be a finite number");
      assert.equal(errorOf({ logprobs: bad }), "logprobs: must be a finite number");
      assert.equal(errorOf({ seed: bad }), "seed: must be a finite number");
      assert.equal(errorOf({ minP: bad }), "min_p: must be a finite number");
      assert.equal(errorOf({ repetitionPenalty: bad }), "repetition_penalty: must be a finite number");
      assert.equal(errorOf({ presencePenalty: bad }), "presence_penalty: must be a finite number");
      assert.equal(errorOf({ frequencyPenalty: bad }), "frequency_penalty: must be a finite number");
    }
  });

  it("rejects empty, too many, too long or malformed stop strings", () => {
    assert.equal(errorOf({ stop: ["ok", ""] }), "stop: entry 1 must not be empty");
    assert.equal(
      errorOf({ stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }),
      "stop: at most 16 stop strings",
    );
    assert.ok(parseSamplingParams({ stop: Array.from({ length: 16 }, (_, i) => `s${i}`) }, limits).value);
    assert.match(errorOf({ stop: ["x".repeat(257)] }), /^stop: entry 0 is longer than 256/);
    assert.equal(errorOf({ stop: ["\uD83D"] }), "stop: entry 0 is not valid Unicode");
  });

  it("accepts min_tokens from 0 up to max_tokens (the default one when unset) and refuses the rest", () => {
    assert.equal(parseSamplingParams({}, limits).value?.minTokens, 0);
    assert.equal(parseSamplingParams({ maxTokens: 8, minTokens: 8 }, limits).value?.minTokens, 8);
    assert.equal(parseSamplingParams({ minTokens: 16 }, limits).value?.minTokens, 16);
    assert.equal(errorOf({ maxTokens: 8, minTokens: 9 }), "min_tokens: must be <= max_tokens (8)");
    assert.equal(errorOf({ minTokens: 17 }), "min_tokens: must be <= max_tokens (16)");
    assert.equal(errorOf({ minTokens: -1 }), "min_tokens: must be >= 0");
    assert.equal(errorOf({ minTokens: 1.5 }), "min_tokens: must be an integer");
    assert.equal(errorOf({ minTokens: Number.NaN }), "min_tokens: must be a finite number");
  });

  it("rejects stop_token_ids outside the vocabulary", () => {
    assert.equal(
      errorOf({ stopTokenIds: [5, 32_000] }),
      "stop_token_ids: 32000 is outside the vocabulary (0..31999)",
    );
    assert.match(errorOf({ stopTokenIds: [-1] }), /^stop_token_ids: -1 is outside/);
    assert.match(errorOf({ stopTokenIds: [1.5] }), /^stop_token_ids: 1.5 is outside/);
  });

  it("takes logit_bias as ids (numbers or decimal strings) to biases in [-100, 100], inside the vocabulary", () => {
    const ok = parseSamplingParams({ logitBias: { "5": 100, 7: -2.5, 9: 0 } }, limits);
    assert.deepEqual(
      ok.value?.logitBias,
      new Map([
        [5, 100],
        [7, -2.5],
      ]),
    );
    assert.equal(parseSamplingParams({ logitBias: {} }, limits).value?.logitBias, undefined);
    assert.match(errorOf({ logitBias: { "32000": 1 } }), /^logit_bias: key "32000" is not a token id/);
    assert.match(errorOf({ logitBias: { "-1": 1 } }), /^logit_bias: key "-1"/);
    assert.match(errorOf({ logitBias: { x: 1 } }), /^logit_bias: key "x"/);
    assert.match(errorOf({ logitBias: { "5": 100.5 } }), /^logit_bias: the bias of 5 must be/);
    assert.match(errorOf({ logitBias: { "5": Number.NaN } }), /^logit_bias: /);
  });

  it("takes n and best_of (best_of >= n, both at most 16) and prompt_logprobs (0..20; echo with logprobs implies it)", () => {
    const value = parseSamplingParams({ n: 4, bestOf: 6, promptLogprobs: 0 }, limits).value!;
    assert.deepEqual([value.n, value.bestOf, value.promptLogprobs], [4, 6, 0]);
    const single = parseSamplingParams({ n: 0, bestOf: 0 }, limits).value!;
    assert.deepEqual([single.n, single.bestOf, single.promptLogprobs], [undefined, undefined, undefined]);
    assert.equal(parseSamplingParams({ echo: true, logprobs: 3 }, limits).value?.promptLogprobs, 3);
    assert.equal(parseSamplingParams({ echo: true }, limits).value?.promptLogprobs, undefined);
    assert.match(errorOf({ n: 17 }), /^n: must be in 1..16/);
    assert.match(errorOf({ n: 1.5 }), /^n: must be an integer/);
    assert.match(errorOf({ n: 3, bestOf: 2 }), /^best_of: must be in n..16 \(n is 3\)/);
    assert.match(errorOf({ promptLogprobs: 21 }), /^prompt_logprobs: must be in 0..20/);
  });
});

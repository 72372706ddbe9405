import assert from "node:assert/strict";
import { Code } from "../../kernel/errors.ts";
import { parseGenerationConfig } from "./checkpoint-generation-config.ts";

const read = (json: unknown) => parseGenerationConfig(json, "/models/m");

describe("parseGenerationConfig", () => {
  it("recommends nothing when the file is missing or holds only ids", () => {
    assert.deepEqual(read(undefined).value, { eosTokenIds: undefined, sampling: {}, notApplied: [] });
    // As the model factory (and transformers for a base model) writes it.
    const plain = { _from_model_config: true, bos_token_id: 1, eos_token_id: 2, pad_token_id: 0 };
    assert.deepEqual(read(plain).value, { eosTokenIds: [2], sampling: {}, notApplied: [] });
  });

  it("reads eos_token_id as one id or a list", () => {
    assert.deepEqual(
      read({ eos_token_id: [128_001, 128_008, 128_009] }).value?.eosTokenIds,
      [128_001, 128_008, 128_009],
    );
    assert.deepEqual(read({ eos_token_id: 7 }).value?.eosTokenIds, [7]);
    assert.equal(read({ eos_token_id: null }).value?.eosTokenIds, undefined);
  });

  it("takes the recommended sampling (Qwen3's file)", () => {
    const qwen3 = {
      bos_token_id: 151_643,
      do_sample: true,
      eos_token_id: [151_645, 151_643],
      pad_token_id: 151_643,
      temperature: 0.6,
      top_k: 20,
      top_p: 0.95,
      transformers_version: "4.51.0",
    };
    assert.deepEqual(read(qwen3).value, {
      eosTokenIds: [151_645, 151_643],
      sampling: { temperature: 0.6, topP: 0.95, topK: 20 },
      notApplied: [],
    });
    const all = { temperature: 0.7, top_p: 0.8, top_k: 40, min_p: 0.05, repetition_penalty: 1.05 };
    assert.deepEqual(read(all).value?.sampling, {
      temperature: 0.7,
      topP: 0.8,
      topK: 40,
      minP: 0.05,
      repetitionPenalty: 1.05,
    });
  });

  it("reads a file without do_sample as vLLM does: its temperature applies", () => {
    assert.deepEqual(read({ temperature: 0.9, top_p: 0.6 }).value?.sampling, { temperature: 0.9, topP: 0.6 });
  });

  it("makes do_sample false greedy, keeping repetition_penalty and naming what it drops", () => {
    const result = read({
      do_sample: false,
      temperature: 0.6,
      top_p: 0.9,
      top_k: 5,
      repetition_penalty: 1.1,
    });
    assert.deepEqual(result.value?.sampling, { temperature: 0, repetitionPenalty: 1.1 });
    assert.deepEqual(result.value?.notApplied, [
      "temperature 0.6 (do_sample is false: greedy)",
      "top_p 0.9 (do_sample is false: greedy)",
      "top_k 5 (do_sample is false: greedy)",
    ]);
    assert.deepEqual(read({ do_sample: false }).value?.sampling, { temperature: 0 });
  });

  it("reads top_k <= 0 as off, skips nulls and names max_new_tokens as not applied", () => {
    assert.deepEqual(read({ top_k: -1, top_p: null }).value?.sampling, { topK: 0 });
    assert.deepEqual(read({ max_new_tokens: 2048 }).value?.notApplied, [
      "max_new_tokens 2048 (the default max_tokens stays 16)",
    ]);
  });

  it("refuses a value of the wrong type or range, naming the file and field", () => {
    const cases: [unknown, RegExp][] = [
      [{ temperature: "0.7" }, /generation_config\.json: temperature: must be a finite number/],
      [{ temperature: -1 }, /temperature: must be >= 0/],
      [{ top_p: 1.5 }, /top_p: must be in \[0, 1\]/],
      [{ top_k: 2.5 }, /top_k: must be an integer/],
      [{ min_p: -0.1 }, /min_p: must be in \[0, 1\]/],
      [{ repetition_penalty: 0 }, /repetition_penalty: must be > 0/],
      [{ do_sample: "yes" }, /do_sample: must be a boolean/],
      [{ eos_token_id: [2, "x"] }, /eos_token_id: must be a token id or a list of token ids/],
      [[1, 2], /must be a JSON object/],
    ];
    for (const [json, pattern] of cases) {
      const { error } = read(json);
      assert.equal(error?.code, Code.INVALID_ARGUMENT, JSON.stringify(json));
      assert.match(error.message, pattern);
      assert.match(error.message, /^\/models\/m\/generation_config\.json: /);
    }
  });
});

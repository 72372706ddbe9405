import assert from "node:assert/strict";
import { parseSpeculativeConfig } from "./speculative-config.ts";

describe("parseSpeculativeConfig", () => {
  it("reads vLLM's n-gram config, prompt_lookup_min following prompt_lookup_max", () => {
    assert.deepEqual(
      parseSpeculativeConfig('{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'),
      {
        method: "ngram",
        numSpeculativeTokens: 4,
        disableByBatchSize: undefined,
        promptLookupMin: 4,
        promptLookupMax: 4,
      },
    );
    const c = parseSpeculativeConfig({ method: "ngram", num_speculative_tokens: 3 });
    assert.equal(c.method === "ngram" && `${c.promptLookupMin}-${c.promptLookupMax}`, "5-5");
  });

  it("takes a model as a draft model, with disable_by_batch_size", () => {
    assert.deepEqual(
      parseSpeculativeConfig({ model: "/m/draft", num_speculative_tokens: 2, disable_by_batch_size: 8 }),
      { method: "draft_model", model: "/m/draft", numSpeculativeTokens: 2, disableByBatchSize: 8 },
    );
  });

  for (const [raw, message] of [
    ["{", /speculative_config\.\(root\): not JSON/],
    [{ method: "ngram" }, /speculative_config\.num_speculative_tokens/],
    [{ num_speculative_tokens: 4 }, /speculative_config\.method: set "method"/],
    [{ method: "eagle", num_speculative_tokens: 4 }, /speculative_config\.method/],
    [{ method: "ngram", num_speculative_tokens: 0 }, /speculative_config\.num_speculative_tokens/],
    [
      { method: "ngram", num_speculative_tokens: 2, prompt_lookup_min: 5, prompt_lookup_max: 3 },
      /prompt_lookup_min: must be <= prompt_lookup_max \(3\)/,
    ],
    [{ method: "ngram", model: "/m", num_speculative_tokens: 2 }, /speculative_config\.model: the "ngram"/],
    [{ method: "draft_model", num_speculative_tokens: 2 }, /speculative_config\.model: a draft model needs/],
    [{ model: "/m", num_speculative_tokens: 2, prompt_lookup_max: 2 }, /prompt_lookup_max: applies to/],
    [{ method: "ngram", num_speculative_tokens: 2, typo: 1 }, /speculative_config\.\(root\)|typo/],
  ] as const)
    it(`refuses ${JSON.stringify(raw)}, naming the field`, () => {
      assert.throws(() => parseSpeculativeConfig(raw), message);
    });
});

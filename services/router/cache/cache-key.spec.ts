import assert from "node:assert/strict";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { SamplingParams } from "../../inference/types.ts";
import { cacheKey, isDeterministic } from "./cache-key.ts";

const greedy: SamplingParams = greedySampling();

describe("cache key", () => {
  it("caches greedy and seeded requests only", () => {
    assert.equal(isDeterministic(greedy), true);
    assert.equal(isDeterministic({ ...greedy, temperature: 0.7 }), false);
    assert.equal(isDeterministic({ ...greedy, temperature: 0.7, seed: 3n }), true);
  });

  it("differs with the model revision, the prompt and every sampling field", () => {
    const base = cacheKey("m", "r1", [1, 2, 3], greedy);
    assert.equal(cacheKey("m", "r1", [1, 2, 3], { ...greedy }), base);
    assert.notEqual(cacheKey("m", "r2", [1, 2, 3], greedy), base);
    assert.notEqual(cacheKey("m", "r1", [1, 2, 4], greedy), base);
    assert.notEqual(cacheKey("m", "r1", [1, 2, 3], { ...greedy, maxTokens: 17 }), base);
    assert.notEqual(cacheKey("m", "r1", [1, 2, 3], { ...greedy, seed: 1n }), base);
    assert.notEqual(cacheKey("m", "r1", [1, 2, 3], { ...greedy, stop: ["x"] }), base);
    assert.notEqual(cacheKey("m", "r1", [1, 2, 3], { ...greedy, n: 2 }), base);
    assert.notEqual(cacheKey("m", "r1", [1, 2, 3], { ...greedy, promptLogprobs: 0 }), base);
  });

  it("tells logit biases apart (a Map is keyed by its entries)", () => {
    const bias = (entries: [number, number][]) =>
      cacheKey("m", "r1", [1], { ...greedy, logitBias: new Map(entries) });
    assert.notEqual(bias([[5, 100]]), cacheKey("m", "r1", [1], greedy));
    assert.notEqual(bias([[5, 100]]), bias([[6, 100]]));
    assert.notEqual(bias([[5, 100]]), bias([[5, -100]]));
    assert.equal(bias([[5, 100]]), bias([[5, 100]]));
  });
});

// Exactness of speculative verification, statistically: over thousands of seeds at fixed target logits,
// the token a verification step emits follows the target distribution (chi-square), whatever the draft
// proposed and whatever distribution it drew the proposal from.
import assert from "node:assert/strict";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { SamplingParams } from "../../inference/types.ts";
import { Tokenizer } from "../../tokenizer/tokenizer.ts";
import { EngineRequest } from "../engine/request.ts";
import { CounterRng } from "../sampling/philox.ts";
import type { TokenDistribution } from "../sampling/sampler.ts";
import { TRAINED_LLAMA_DIR } from "../testdata/trained-llama.ts";
import type { Draft } from "./draft.ts";
import { DRAFT_DRAW, verifyDraft } from "./verify-draft.ts";

const VOCAB = 8;
const PROMPT = [1, 2, 3];
const tokenizer = Tokenizer.fromFile(TRAINED_LLAMA_DIR);
const LIMITS = { maxContext: 64, eosTokenIds: [] };
// Two target rows: the token after the prompt, and the one after that (the bonus token).
const ROW0 = Float32Array.of(1.2, 0.3, -0.5, 2.0, 0.9, -1.5, 0.1, 1.6);
const ROW1 = Float32Array.of(0.5, 0.5, 1.5, -0.2, 0.0, 0.7, -1.0, 0.3);

function softmax(logits: Float32Array, temperature = 1): number[] {
  const max = Math.max(...logits);
  const w = Array.from(logits, (x) => Math.exp((x - max) / temperature));
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / sum);
}

function request(seed: number, sampling: Partial<SamplingParams> = {}): EngineRequest {
  return new EngineRequest({
    id: `v${seed}`,
    order: seed,
    priority: 0,
    promptIds: PROMPT,
    sampling: greedySampling({
      temperature: 1,
      seed: BigInt(seed),
      maxTokens: 8,
      ignoreEos: true,
      ...sampling,
    }),
    eosTokenIds: [],
    text: tokenizer.textStream(),
    deadline: undefined,
    now: 0,
    onCancel: () => {},
  });
}

/** The draft model's rule (draft-model-proposer.ts): inverse CDF of q with the DRAFT_DRAW of the position. */
function drawFrom(q: TokenDistribution, seed: number, position: number): number {
  const u = new CounterRng(BigInt(seed)).uniform(position, DRAFT_DRAW);
  let acc = 0;
  for (let i = 0; i < q.ids.length; i++) {
    acc += q.probs[i]!;
    if (u < acc) return q.ids[i]!;
  }
  return q.ids[q.ids.length - 1]!;
}

/** Pearson's statistic of observed counts against expected probabilities. */
function chiSquare(counts: number[], probs: number[]): number {
  const n = counts.reduce((a, b) => a + b, 0);
  return counts.reduce((s, c, i) => s + (c - n * probs[i]!) ** 2 / (n * probs[i]!), 0);
}

// Chi-square with 7 degrees of freedom: P(X > 24.32) = 0.001. The seeds are fixed, so the test is
// deterministic; a wrong rule (e.g. accepting every proposal, or resampling from p) lands far above.
const CRITICAL_7 = 24.32;
const N = 20_000;

function firstTokens(draftOf: (seed: number) => Draft, sampling: Partial<SamplingParams> = {}) {
  const counts = new Array<number>(VOCAB).fill(0);
  let accepted = 0;
  const rows = new Float32Array([...ROW0, ...ROW1]);
  for (let seed = 0; seed < N; seed++) {
    const r = request(seed, sampling);
    r.draft = draftOf(seed);
    const v = verifyDraft(r, rows, VOCAB, r.draft.tokens.length, LIMITS, () => {});
    counts[r.tokens[PROMPT.length]!]!++;
    accepted += v.accepted;
  }
  return { counts, accepted };
}

describe("verifyDraft", () => {
  const p = softmax(ROW0);

  it("emits tokens distributed as the target's when the draft samples from a different q (rejection sampling)", () => {
    const qProbs = [0.05, 0.3, 0.2, 0.05, 0.1, 0.2, 0.05, 0.05];
    const q: TokenDistribution = {
      ids: Int32Array.from(qProbs.keys()),
      probs: Float64Array.from(qProbs),
    };
    const { counts, accepted } = firstTokens((seed) => ({
      tokens: [drawFrom(q, seed, PROMPT.length)],
      q: [q],
    }));
    assert.ok(chiSquare(counts, p) < CRITICAL_7, `chi-square ${chiSquare(counts, p)} counts ${counts}`);
    // Acceptance is sum(min(p, q)) in expectation.
    const expected = p.reduce((s, pi, i) => s + Math.min(pi, qProbs[i]!), 0);
    assert.ok(Math.abs(accepted / N - expected) < 0.02, `acceptance ${accepted / N}, expected ${expected}`);
  });

  it("emits the target's distribution with a point-mass proposal (n-gram), the same tokens as without speculation", () => {
    const { counts, accepted } = firstTokens(() => ({ tokens: [3] }));
    assert.ok(chiSquare(counts, p) < CRITICAL_7, `chi-square ${chiSquare(counts, p)}`);
    assert.ok(Math.abs(accepted / N - p[3]!) < 0.02);
    for (let seed = 0; seed < 50; seed++) {
      const plain = request(seed).sampler.sample(Float32Array.from(ROW0), PROMPT.length).tokenId;
      const r = request(seed);
      r.draft = { tokens: [3] };
      verifyDraft(r, new Float32Array([...ROW0, ...ROW1]), VOCAB, 1, LIMITS, () => {});
      assert.equal(r.tokens[PROMPT.length], plain);
    }
  });

  it("follows the tempered, top-k-truncated target when the request sets them", () => {
    const sampling = { temperature: 0.7, topK: 4 };
    const pt = softmax(ROW0, 0.7);
    const kept = [...pt.keys()].sort((a, b) => pt[b]! - pt[a]!).slice(0, 4);
    const mass = kept.reduce((s, i) => s + pt[i]!, 0);
    const target = pt.map((x, i) => (kept.includes(i) ? x / mass : 0));
    const uniform: TokenDistribution = {
      ids: Int32Array.from({ length: VOCAB }, (_, i) => i),
      probs: new Float64Array(VOCAB).fill(1 / VOCAB),
    };
    const { counts } = firstTokens(
      (seed) => ({ tokens: [drawFrom(uniform, seed, PROMPT.length)], q: [uniform] }),
      sampling,
    );
    const keptCounts = kept.map((i) => counts[i]!);
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      keptCounts.reduce((a, b) => a + b, 0),
      "a token outside top_k",
    );
    // 3 degrees of freedom: P(X > 16.27) = 0.001.
    assert.ok(
      chiSquare(
        keptCounts,
        kept.map((i) => target[i]!),
      ) < 16.27,
    );
  });

  it("takes the bonus token after accepted proposals, and repeats itself for a seed", () => {
    const run = (seed: number) => {
      const r = request(seed, { temperature: 0 });
      r.draft = { tokens: [3] }; // the argmax of ROW0: accepted
      const v = verifyDraft(r, new Float32Array([...ROW0, ...ROW1]), VOCAB, 1, LIMITS, () => {});
      return { tokens: r.tokens.slice(PROMPT.length), accepted: v.accepted };
    };
    assert.deepEqual(run(1), { tokens: [3, 2], accepted: 1 });
    const q: TokenDistribution = { ids: Int32Array.of(1, 3), probs: Float64Array.of(0.5, 0.5) };
    const sampled = (seed: number) => {
      const r = request(seed);
      r.draft = { tokens: [drawFrom(q, seed, PROMPT.length)], q: [q] };
      verifyDraft(r, new Float32Array([...ROW0, ...ROW1]), VOCAB, 1, LIMITS, () => {});
      return r.tokens.slice(PROMPT.length);
    };
    for (let seed = 0; seed < 20; seed++) assert.deepEqual(sampled(seed), sampled(seed));
  });

  it("stops at max_tokens inside the accepted proposals", () => {
    const r = request(0, { temperature: 0, maxTokens: 1 });
    r.draft = { tokens: [3] };
    const v = verifyDraft(r, new Float32Array([...ROW0, ...ROW1]), VOCAB, 1, LIMITS, () => {});
    assert.equal(v.reason, "length");
    assert.deepEqual(r.tokens.slice(PROMPT.length), [3]);
  });
});

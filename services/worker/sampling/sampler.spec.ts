import assert from "node:assert/strict";
import { TesseraError } from "../../common/errors.ts";
import type { SamplingParams } from "../engine/types.ts";
import { Rng } from "./rng.ts";
import { logitStats, Sampler } from "./sampler.ts";

function params(overrides: Partial<SamplingParams> = {}): SamplingParams {
  return {
    maxTokens: 16,
    temperature: 1,
    topP: 1,
    topK: 0,
    seed: 1n,
    stop: [],
    stopTokenIds: [],
    ignoreEos: false,
    logprobs: 0,
    ...overrides,
  };
}

function randomLogits(n: number, seed: bigint, scale = 4): Float32Array {
  const rng = new Rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.nextFloat() - 0.5) * 2 * scale;
  return out;
}

function sequence(sampler: Sampler, logits: Float32Array, n: number): number[] {
  return Array.from({ length: n }, () => sampler.sample(logits).tokenId);
}

/** Reference distribution: temperature, then top-k, then top-p over a full sort. */
function filteredSoftmax(logits: Float32Array, p: SamplingParams): number[] {
  const order = Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]! || a - b);
  const kept = p.topK > 0 ? order.slice(0, p.topK) : order;
  const max = logits[order[0]!]!;
  const w = kept.map((id) => Math.exp((logits[id]! - max) / p.temperature));
  const total = w.reduce((a, b) => a + b, 0);
  const probs = new Array<number>(logits.length).fill(0);
  let mass = 0;
  let nucleusMass = 0;
  const nucleus: number[] = [];
  for (let i = 0; i < kept.length; i++) {
    nucleus.push(i);
    mass += w[i]! / total;
    nucleusMass += w[i]!;
    if (mass >= p.topP) break;
  }
  for (const i of nucleus) probs[kept[i]!] = w[i]! / nucleusMass;
  return probs;
}

describe("Sampler", () => {
  it("is greedy (argmax, ties to the lowest id) at temperature 0", () => {
    const sampler = new Sampler(params({ temperature: 0 }));
    assert.equal(sampler.sample(new Float32Array([0.1, 2, -3, 1.9])).tokenId, 1);
    assert.equal(sampler.sample(new Float32Array([1, 5, 2, 5, 5])).tokenId, 1);
    const logits = randomLogits(50_000, 3n);
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    assert.equal(sampler.sample(logits).tokenId, best);
  });

  it("reports the chosen token's raw log-softmax, whatever the temperature", () => {
    const logits = new Float32Array([1, 2, 3, 0.5]);
    const z = Math.log(Array.from(logits).reduce((a, x) => a + Math.exp(x), 0));
    for (const temperature of [0, 0.3, 2]) {
      const sampler = new Sampler(params({ temperature, seed: 11n }));
      for (let i = 0; i < 20; i++) {
        const t = sampler.sample(logits);
        assert.ok(Math.abs(t.logprob - (logits[t.tokenId]! - z)) < 1e-6);
        assert.deepEqual(t.top, []);
      }
    }
  });

  it("returns the top alternatives, most likely first, as raw log-softmax", () => {
    const logits = randomLogits(10, 8n);
    logits[7] = logits[2]!; // a tie: lower id first
    const sampler = new Sampler(params({ temperature: 0.5, topK: 2, logprobs: 10 }));
    const t = sampler.sample(logits);
    assert.equal(t.top.length, 10);
    const total = t.top.reduce((a, x) => a + Math.exp(x.logprob), 0);
    assert.ok(Math.abs(total - 1) < 1e-6, `probabilities sum to ${total}`);
    for (let i = 1; i < t.top.length; i++) {
      const prev = t.top[i - 1]!;
      const cur = t.top[i]!;
      assert.ok(prev.logprob > cur.logprob || (prev.logprob === cur.logprob && prev.tokenId < cur.tokenId));
    }
    assert.deepEqual(new Set(t.top.map((x) => x.tokenId)).size, 10);
    const chosen = t.top.find((x) => x.tokenId === t.tokenId);
    assert.equal(chosen?.logprob, t.logprob);

    const three = new Sampler(params({ logprobs: 3 })).sample(logits).top;
    assert.deepEqual(three, t.top.slice(0, 3));
  });

  it("gives the same sequence for the same seed and different ones for different seeds", () => {
    const logits = randomLogits(1000, 4n, 1);
    const a = sequence(new Sampler(params({ seed: 42n })), logits, 50);
    const b = sequence(new Sampler(params({ seed: 42n })), logits, 50);
    const c = sequence(new Sampler(params({ seed: 43n })), logits, 50);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  it("depends only on its own seed and logits, not on other requests", () => {
    const logits = randomLogits(500, 5n, 1);
    const alone = sequence(new Sampler(params({ seed: 7n })), logits, 30);
    const mine = new Sampler(params({ seed: 7n }));
    const other = new Sampler(params({ seed: 7n, topK: 3 }));
    const interleaved: number[] = [];
    for (let i = 0; i < 30; i++) {
      other.sample(randomLogits(2000, BigInt(i)));
      interleaved.push(mine.sample(logits).tokenId);
    }
    assert.deepEqual(interleaved, alone);
  });

  it("draws a seed when none is given and exposes it for replay", () => {
    const logits = randomLogits(1000, 6n, 1);
    const first = new Sampler(params({ seed: undefined }));
    const replay = new Sampler(params({ seed: first.seed }));
    assert.deepEqual(sequence(first, logits, 20), sequence(replay, logits, 20));
  });

  it("equals greedy with top_k = 1 or a tiny top_p", () => {
    const logits = randomLogits(32_000, 9n);
    const greedy = new Sampler(params({ temperature: 0 })).sample(logits).tokenId;
    const topK1 = new Sampler(params({ temperature: 1.5, topK: 1 }));
    const topPTiny = new Sampler(params({ temperature: 1.5, topP: 1e-6 }));
    for (let i = 0; i < 50; i++) {
      assert.equal(topK1.sample(logits).tokenId, greedy);
      assert.equal(topPTiny.sample(logits).tokenId, greedy);
    }
  });

  it("never samples a -Infinity logit or a token outside top-k", () => {
    const logits = new Float32Array([0, Number.NEGATIVE_INFINITY, 0.5, Number.NEGATIVE_INFINITY, -0.2]);
    const sampler = new Sampler(params({ temperature: 5, seed: 3n }));
    const seen = new Set(sequence(sampler, logits, 2000));
    assert.deepEqual([...seen].sort(), [0, 2, 4]);
    const topK2 = new Sampler(params({ temperature: 5, topK: 2 }));
    assert.deepEqual([...new Set(sequence(topK2, logits, 2000))].sort(), [0, 2]);
  });

  for (const [name, overrides] of [
    ["temperature 1", { temperature: 1 }],
    ["temperature 0.5", { temperature: 0.5 }],
    ["temperature 2 + top_k 5", { temperature: 2, topK: 5 }],
    ["top_p 0.6", { topP: 0.6 }],
    ["temperature 0.8 + top_k 6 + top_p 0.9", { temperature: 0.8, topK: 6, topP: 0.9 }],
  ] as const) {
    it(`matches the filtered softmax empirically (${name})`, () => {
      const logits = new Float32Array([1.2, -0.3, 0.8, 2.0, 0.1, -1.5, 1.9, 0.5, -0.7, 1.0]);
      const p = params({ ...overrides, seed: 2024n });
      const expected = filteredSoftmax(logits, p);
      const sampler = new Sampler(p);
      const draws = 100_000;
      const counts = new Array<number>(logits.length).fill(0);
      for (let i = 0; i < draws; i++) counts[sampler.sample(logits).tokenId]! += 1;
      for (let id = 0; id < logits.length; id++) {
        const q = expected[id]!;
        const freq = counts[id]! / draws;
        if (q === 0) {
          assert.equal(counts[id], 0, `token ${id} is filtered out`);
        } else {
          const sigma = Math.sqrt((q * (1 - q)) / draws);
          assert.ok(Math.abs(freq - q) < 5 * sigma + 1e-9, `token ${id}: ${freq} vs ${q}`);
        }
      }
    });
  }

  it("rejects NaN, +Infinity or all -Infinity logits", () => {
    const sampler = new Sampler(params());
    assert.throws(() => sampler.sample(new Float32Array([0, Number.NaN])), TesseraError);
    assert.throws(() => sampler.sample(new Float32Array([0, Number.POSITIVE_INFINITY])), TesseraError);
    assert.throws(() => sampler.sample(new Float32Array([Number.NEGATIVE_INFINITY])), TesseraError);
    assert.throws(() => sampler.sample(new Float32Array(0)), TesseraError);
  });

  it("rejects parameters that did not go through validation", () => {
    assert.throws(() => new Sampler(params({ temperature: -1 })), /temperature/);
    assert.throws(() => new Sampler(params({ temperature: Number.POSITIVE_INFINITY })), /temperature/);
    assert.throws(() => new Sampler(params({ topP: 0 })), /top_p/);
    assert.throws(() => new Sampler(params({ topK: -1 })), /top_k/);
  });

  it("logitStats computes max, first argmax and log-sum-exp stably", () => {
    const s = logitStats(new Float32Array([1000, 1000, Number.NEGATIVE_INFINITY]));
    assert.equal(s.max, 1000);
    assert.equal(s.argmax, 0);
    assert.ok(Math.abs(s.logSumExp - (1000 + Math.LN2)) < 1e-9);
  });

  it("is fast enough for a 150k vocabulary", function () {
    const logits = randomLogits(151_936, 12n, 8);
    const configs: [string, Partial<SamplingParams>][] = [
      ["greedy", { temperature: 0 }],
      ["temperature", { temperature: 0.8 }],
      ["top_k 50", { temperature: 0.8, topK: 50 }],
      ["top_p 0.95", { temperature: 0.8, topP: 0.95 }],
      ["top_k 50 + top_p 0.9 + logprobs 5", { temperature: 0.8, topK: 50, topP: 0.9, logprobs: 5 }],
    ];
    const report: string[] = [];
    for (const [name, overrides] of configs) {
      const sampler = new Sampler(params(overrides));
      for (let i = 0; i < 5; i++) sampler.sample(logits);
      const n = 50;
      const start = performance.now();
      for (let i = 0; i < n; i++) sampler.sample(logits);
      const ms = (performance.now() - start) / n;
      report.push(`${name} ${ms.toFixed(2)} ms`);
      // Generous bound for slow CI machines; typical figures are a few milliseconds.
      assert.ok(ms < 50, `${name}: ${ms} ms per token`);
    }
    this.test!.title += ` (${report.join(", ")})`;
  });
});

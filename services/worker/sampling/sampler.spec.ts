import assert from "node:assert/strict";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { SamplingParams } from "../../inference/types.ts";
import { TesseraError } from "../../kernel/errors.ts";
import { TokenHistory } from "./penalties.ts";
import { Rng } from "./rng.ts";
import { logitStats, Sampler, sampleRow } from "./sampler.ts";

function params(overrides: Partial<SamplingParams> = {}): SamplingParams {
  return greedySampling({ temperature: 1, seed: 1n, ...overrides });
}

function randomLogits(n: number, seed: bigint, scale = 4): Float32Array {
  const rng = new Rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.nextFloat() - 0.5) * 2 * scale;
  return out;
}

/** The tokens at positions from, from + 1, ... drawn from the same logits. */
function sequence(sampler: Sampler, logits: Float32Array, n: number, from = 0): number[] {
  return Array.from({ length: n }, (_, i) => sampler.sample(logits, from + i).tokenId);
}

function historyOf(prompt: number[], output: number[]): TokenHistory {
  const h = new TokenHistory(prompt);
  for (const id of output) h.append(id);
  return h;
}

/** Reference distribution: temperature, then min-p, then top-k, then top-p over a full sort. */
function filteredSoftmax(logits: ArrayLike<number>, p: SamplingParams): number[] {
  const order = Array.from({ length: logits.length }, (_, i) => i).sort(
    (a, b) => logits[b]! - logits[a]! || a - b,
  );
  const max = logits[order[0]!]!;
  const weight = (id: number) => Math.exp((logits[id]! - max) / p.temperature);
  const aboveMinP = order.filter((id) => weight(id) >= p.minP);
  const kept = p.topK > 0 ? aboveMinP.slice(0, p.topK) : aboveMinP;
  const w = kept.map(weight);
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

/** Draws 100k tokens and compares their frequencies with `expected` (5 sigma; zero exactly). */
function checkEmpirically(
  sampler: Sampler,
  logits: Float32Array,
  expected: number[],
  history?: TokenHistory,
): void {
  const draws = 100_000;
  const counts = new Array<number>(logits.length).fill(0);
  for (let i = 0; i < draws; i++) counts[sampler.sample(logits, i, history).tokenId]! += 1;
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
}

describe("Sampler", () => {
  it("is greedy (argmax, ties to the lowest id) at temperature 0", () => {
    const sampler = new Sampler(params({ temperature: 0 }));
    assert.equal(sampler.sample(new Float32Array([0.1, 2, -3, 1.9]), 0).tokenId, 1);
    assert.equal(sampler.sample(new Float32Array([1, 5, 2, 5, 5]), 0).tokenId, 1);
    const logits = randomLogits(50_000, 3n);
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    assert.equal(sampler.sample(logits, 0).tokenId, best);
  });

  it("reports the chosen token's raw log-softmax, whatever the temperature", () => {
    const logits = new Float32Array([1, 2, 3, 0.5]);
    const z = Math.log(Array.from(logits).reduce((a, x) => a + Math.exp(x), 0));
    for (const temperature of [0, 0.3, 2]) {
      const sampler = new Sampler(params({ temperature, seed: 11n }));
      for (let i = 0; i < 20; i++) {
        const t = sampler.sample(logits, i);
        assert.ok(Math.abs(t.logprob - (logits[t.tokenId]! - z)) < 1e-6);
        assert.deepEqual(t.top, []);
      }
    }
  });

  it("returns the top alternatives, most likely first, as raw log-softmax", () => {
    const logits = randomLogits(10, 8n);
    logits[7] = logits[2]!; // a tie: lower id first
    const sampler = new Sampler(params({ temperature: 0.5, topK: 2, logprobs: 10 }));
    const t = sampler.sample(logits, 0);
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

    const three = new Sampler(params({ logprobs: 3 })).sample(logits, 0).top;
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
      other.sample(randomLogits(2000, BigInt(i)), i);
      interleaved.push(mine.sample(logits, i).tokenId);
    }
    assert.deepEqual(interleaved, alone);
  });

  it("draws the same token whether or not top-k / top-p dropped only weightless tokens (draws in id order)", () => {
    // The draw walks the candidates in token-id order, not in the order selection left them (top-k's
    // heaviest first, the nucleus quickselect's pivot order, both following the weights' exact
    // values): so a seeded draw does not move when float rounding (a step batched with other rows, a
    // speculative verify step) reorders near-equal candidates, and truncation that drops nothing of
    // weight changes nothing.
    for (let seed = 0; seed < 200; seed++) {
      const logits = new Float32Array(3000).fill(-Infinity);
      const live = randomLogits(60, BigInt(seed), 1);
      for (let i = 0; i < live.length; i++) logits[(i * 47 + seed) % logits.length] = live[i]!;
      const plain = new Sampler(params({ temperature: 0.8, seed: BigInt(seed) })).sample(logits, 9).tokenId;
      for (const knobs of [{ topK: 100 }, { topP: 1 - 1e-12 }, { topK: 2000, topP: 1 - 1e-12 }]) {
        const p = params({ temperature: 0.8, seed: BigInt(seed), ...knobs });
        assert.equal(
          new Sampler(p).sample(logits, 9).tokenId,
          plain,
          `seed ${seed}, ${JSON.stringify(knobs)}`,
        );
      }
    }
  });

  it("draws a seed when none is given and exposes it for replay", () => {
    const logits = randomLogits(1000, 6n, 1);
    const first = new Sampler(params({ seed: undefined }));
    const replay = new Sampler(params({ seed: first.seed }));
    assert.deepEqual(sequence(first, logits, 20), sequence(replay, logits, 20));
  });

  it("picks a position's token from the seed and position alone: a sampler taking over mid-request continues the same tokens", () => {
    // What a decode worker, or a worker a request migrated to, does: a fresh sampler with the same
    // seed, first asked for a later position. Logits differ per position, as in a real generation.
    const p = params({ temperature: 0.9, topP: 0.9, seed: 123n });
    const logitsAt = (position: number) => randomLogits(800, 1000n + BigInt(position), 2);
    const whole = new Sampler(p);
    const tokens = Array.from({ length: 60 }, (_, i) => whole.sample(logitsAt(100 + i), 100 + i).tokenId);
    assert.ok(new Set(tokens).size > 20, "the tokens are sampled, not one repeated argmax");
    const takeover = new Sampler(p);
    const rest = Array.from({ length: 30 }, (_, i) => takeover.sample(logitsAt(130 + i), 130 + i).tokenId);
    assert.deepEqual(rest, tokens.slice(30));
    assert.equal(whole.sample(logitsAt(140), 140).tokenId, tokens[40], "the same position draws the same");
    const rows = new Sampler(p);
    assert.deepEqual(
      Array.from({ length: 60 }, (_, i) => sampleRow(logitsAt(100 + i), rows.prepare(100 + i)).tokenId),
      tokens,
      "sampleRow with prepare (a parallel group's last stage) picks the same",
    );
  });

  it("equals greedy with top_k = 1 or a tiny top_p", () => {
    const logits = randomLogits(32_000, 9n);
    const greedy = new Sampler(params({ temperature: 0 })).sample(logits, 0).tokenId;
    const topK1 = new Sampler(params({ temperature: 1.5, topK: 1 }));
    const topPTiny = new Sampler(params({ temperature: 1.5, topP: 1e-6 }));
    for (let i = 0; i < 50; i++) {
      assert.equal(topK1.sample(logits, i).tokenId, greedy);
      assert.equal(topPTiny.sample(logits, i).tokenId, greedy);
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
    ["min_p 0.3", { minP: 0.3 }],
    ["temperature 2 + min_p 0.5", { temperature: 2, minP: 0.5 }],
    ["temperature 0.7 + min_p 0.05", { temperature: 0.7, minP: 0.05 }],
    ["min_p 0.2 + top_k 4", { minP: 0.2, topK: 4 }],
    ["min_p 0.2 + top_k 8", { minP: 0.2, topK: 8 }],
    ["temperature 1.5 + min_p 0.1 + top_p 0.8", { temperature: 1.5, minP: 0.1, topP: 0.8 }],
    ["min_p 0.15 + top_k 6 + top_p 0.7", { minP: 0.15, topK: 6, topP: 0.7 }],
  ] as const) {
    it(`matches the filtered softmax empirically (${name})`, () => {
      const logits = new Float32Array([1.2, -0.3, 0.8, 2.0, 0.1, -1.5, 1.9, 0.5, -0.7, 1.0]);
      const p = params({ ...overrides, seed: 2024n });
      checkEmpirically(new Sampler(p), logits, filteredSoftmax(logits, p));
    });
  }

  it("rejects NaN, +Infinity or all -Infinity logits", () => {
    const sampler = new Sampler(params());
    assert.throws(() => sampler.sample(new Float32Array([0, Number.NaN]), 0), TesseraError);
    assert.throws(() => sampler.sample(new Float32Array([0, Number.POSITIVE_INFINITY]), 0), TesseraError);
    assert.throws(() => sampler.sample(new Float32Array([Number.NEGATIVE_INFINITY]), 0), TesseraError);
    assert.throws(() => sampler.sample(new Float32Array(0), 0), TesseraError);
  });

  it("rejects parameters that did not go through validation", () => {
    assert.throws(() => new Sampler(params({ temperature: -1 })), /temperature/);
    assert.throws(() => new Sampler(params({ temperature: Number.POSITIVE_INFINITY })), /temperature/);
    assert.throws(() => new Sampler(params({ topP: 0 })), /top_p/);
    assert.throws(() => new Sampler(params({ topK: -1 })), /top_k/);
    assert.throws(() => new Sampler(params({ minP: 1.5 })), /^TesseraError: min_p: must be in \[0, 1\]/);
    assert.throws(() => new Sampler(params({ minP: Number.NaN })), /min_p/);
    assert.throws(() => new Sampler(params({ repetitionPenalty: 0 })), /repetition_penalty: must be > 0/);
    assert.throws(
      () => new Sampler(params({ repetitionPenalty: Number.POSITIVE_INFINITY })),
      /repetition_penalty/,
    );
    assert.throws(
      () => new Sampler(params({ presencePenalty: -3 })),
      /presence_penalty: must be in \[-2, 2\]/,
    );
    assert.throws(() => new Sampler(params({ frequencyPenalty: Number.NaN })), /frequency_penalty/);
  });

  it("logitStats computes max, first argmax and log-sum-exp stably", () => {
    const s = logitStats(new Float32Array([1000, 1000, Number.NEGATIVE_INFINITY]));
    assert.equal(s.max, 1000);
    assert.equal(s.argmax, 0);
    assert.ok(Math.abs(s.logSumExp - (1000 + Math.LN2)) < 1e-9);
  });

  it("at temperature 1 reports the same log-softmax, bit for bit, from the weights it drew with", () => {
    for (const [i, overrides] of [{}, { topP: 0.9 }, { topK: 5000 }, { logprobs: 4 }].entries()) {
      const logits = randomLogits(3000, BigInt(40 + i), 6);
      const { logSumExp } = logitStats(logits);
      const token = new Sampler(params({ temperature: 1, logprobs: 3, ...overrides })).sample(logits, 0);
      assert.equal(token.logprob, logits[token.tokenId]! - logSumExp);
      for (const alt of token.top) assert.equal(alt.logprob, logits[alt.tokenId]! - logSumExp);
    }
  });
});

describe("Sampler penalties", () => {
  const greedy = (overrides: Partial<SamplingParams>) =>
    new Sampler(params({ temperature: 0, ...overrides }));

  it("needs a history only when a penalty is on", () => {
    const logits = new Float32Array([0, 1, 2]);
    assert.equal(new Sampler(params()).usesHistory, false);
    assert.equal(new Sampler(params({ minP: 0.5 })).usesHistory, false);
    assert.equal(greedy({}).sample(logits, 0).tokenId, 2);
    for (const overrides of [
      { repetitionPenalty: 1.1 },
      { presencePenalty: 0.1 },
      { frequencyPenalty: -0.1 },
    ]) {
      const sampler = greedy(overrides);
      assert.equal(sampler.usesHistory, true);
      assert.throws(() => sampler.sample(logits, 0), /TokenHistory/);
      assert.equal(sampler.sample(logits, 0, new TokenHistory([])).tokenId, 2);
    }
  });

  it("reads missing min_p and penalties as off (literals older than those fields)", () => {
    const { minP, repetitionPenalty, presencePenalty, frequencyPenalty, ...old } = params({ temperature: 0 });
    const sampler = new Sampler(old as SamplingParams);
    assert.equal(sampler.usesHistory, false);
    assert.equal(sampler.sample(new Float32Array([0, 3, 1]), 0).tokenId, 1);
  });

  it("repetition penalty moves the greedy choice off a repeated token (prompt or output)", () => {
    const logits = new Float32Array([2, 1.5, -1, -0.5]);
    assert.equal(greedy({ repetitionPenalty: 1.2 }).sample(logits, 0, historyOf([0], [])).tokenId, 0); // 1.67 > 1.5
    assert.equal(greedy({ repetitionPenalty: 1.5 }).sample(logits, 0, historyOf([0], [])).tokenId, 1); // 1.33 < 1.5
    assert.equal(greedy({ repetitionPenalty: 1.5 }).sample(logits, 0, historyOf([2], [0])).tokenId, 1);
    // Negative logits are multiplied: -0.5 * 3 = -1.5 < -1.
    const negative = new Float32Array([-3, -3, -1, -0.5]);
    assert.equal(greedy({ repetitionPenalty: 3 }).sample(negative, 0, historyOf([3], [])).tokenId, 2);
    // Below 1 it favours repeats: 1.5 / 0.7 = 2.14 > 2.
    assert.equal(greedy({ repetitionPenalty: 0.7 }).sample(logits, 0, historyOf([1], [])).tokenId, 1);
  });

  it("presence penalty counts generated tokens only, once each", () => {
    const logits = new Float32Array([1, 0.9, 0]);
    const sampler = greedy({ presencePenalty: 0.2 });
    assert.equal(sampler.sample(logits, 0, historyOf([0, 0, 0], [])).tokenId, 0); // prompt: not penalized
    assert.equal(sampler.sample(logits, 0, historyOf([], [0])).tokenId, 1); // 0.8 < 0.9
    const far = new Float32Array([1, 0.5, 0]);
    assert.equal(sampler.sample(far, 0, historyOf([], [0, 0, 0, 0])).tokenId, 0); // 0.8 > 0.5 however often
    assert.equal(greedy({ presencePenalty: -0.6 }).sample(far, 0, historyOf([], [1])).tokenId, 1); // 1.1 > 1
  });

  it("frequency penalty grows with the count", () => {
    const logits = new Float32Array([1, 0.5, 0]);
    const sampler = greedy({ frequencyPenalty: 0.2 });
    assert.equal(sampler.sample(logits, 0, historyOf([0], [])).tokenId, 0);
    assert.equal(sampler.sample(logits, 0, historyOf([], [0, 0])).tokenId, 0); // 0.6 > 0.5
    assert.equal(sampler.sample(logits, 0, historyOf([], [0, 0, 0])).tokenId, 1); // 0.4 < 0.5
    const h = historyOf([], [0, 0]);
    assert.equal(sampler.sample(logits, 0, h).tokenId, 0);
    h.append(0);
    assert.equal(sampler.sample(logits, 0, h).tokenId, 1, "an appended token counts at the next step");
  });

  it("breaks ties between penalized and untouched tokens by the lowest id", () => {
    // Penalized down onto an untouched token of higher id: the penalized one (lower id) wins.
    const down = new Float32Array([0.5, 2, 1.5, 0]);
    assert.equal(greedy({ presencePenalty: 0.5 }).sample(down, 0, historyOf([], [1])).tokenId, 1);
    // Boosted up to an untouched token of lower id: the untouched one wins.
    const up = new Float32Array([0.5, 1.5, 1, 0]);
    assert.equal(greedy({ presencePenalty: -1.5 }).sample(up, 0, historyOf([], [3])).tokenId, 1);
    // Boosted up to an untouched token of higher id: the boosted one wins.
    const low = new Float32Array([1, 1.5]);
    assert.equal(greedy({ presencePenalty: -0.5 }).sample(low, 0, historyOf([], [0])).tokenId, 0);
  });

  it("reports raw logprobs and leaves the logits as they were", () => {
    const logits = randomLogits(2000, 21n);
    const before = Float32Array.from(logits);
    const history = historyOf([5, 6, 7, 1999], [3, 3, 42]);
    const penalized = greedy({
      repetitionPenalty: 1.3,
      presencePenalty: 1,
      frequencyPenalty: 1,
      logprobs: 5,
    });
    const plain = greedy({ logprobs: 5 });
    const a = penalized.sample(logits, 0, history);
    const b = plain.sample(logits, 0);
    assert.deepEqual(logits, before);
    assert.ok(Math.abs(a.logprob - (logits[a.tokenId]! - logitStats(logits).logSumExp)) < 1e-9);
    assert.equal(a.top.length, 5);
    for (const [i, t] of a.top.entries()) {
      assert.equal(t.tokenId, b.top[i]!.tokenId);
      assert.ok(Math.abs(t.logprob - b.top[i]!.logprob) < 1e-9);
    }
  });

  it("restores the logits when sampling throws", () => {
    const logits = new Float32Array([1, Number.NaN, 2, 3]);
    const before = Float32Array.from(logits);
    assert.throws(() => greedy({ repetitionPenalty: 2 }).sample(logits, 0, historyOf([3], [])), /NaN/);
    assert.deepEqual(logits, before);
    const inf = new Float32Array([1, 2, Number.POSITIVE_INFINITY]);
    assert.throws(
      () => greedy({ repetitionPenalty: 2 }).sample(inf, 0, historyOf([2], [])),
      /no finite maximum/,
    );
    assert.throws(
      () => greedy({ repetitionPenalty: 2 }).sample(inf, 0, historyOf([0], [])),
      /no finite maximum/,
    );
    assert.deepEqual(inf, new Float32Array([1, 2, Number.POSITIVE_INFINITY]));
    const allInf = new Float32Array([Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    assert.throws(
      () => greedy({ presencePenalty: 2 }).sample(allInf, 0, historyOf([], [0])),
      /no finite maximum/,
    );
  });

  it("handles a history that touches every id", () => {
    const logits = new Float32Array([1, 3, 2]);
    const t = greedy({ repetitionPenalty: 4, logprobs: 3 }).sample(logits, 0, historyOf([0, 1, 2], []));
    assert.equal(t.tokenId, 1); // 0.25, 0.75, 0.5
    assert.ok(Math.abs(t.logprob - (3 - logitStats(logits).logSumExp)) < 1e-9);
  });

  it("samples the softmax of the penalized logits (temperature, min_p, top-k, top-p after penalties)", () => {
    const logits = new Float32Array([1.2, -0.3, 0.8, 2.0, 0.1, -1.5, 1.9, 0.5, -0.7, 1.0]);
    const history = historyOf([3, 0, 5], [6, 6, 9, 1]);
    const p = params({
      temperature: 0.9,
      topK: 7,
      topP: 0.95,
      minP: 0.02,
      repetitionPenalty: 1.4,
      presencePenalty: 0.3,
      frequencyPenalty: 0.2,
      seed: 77n,
    });
    const penalized = Array.from(logits, (l, id) => {
      let v = history.inPrompt(id) || history.count(id) > 0 ? (l > 0 ? l / 1.4 : l * 1.4) : l;
      const c = history.count(id);
      if (c > 0) v -= 0.2 * c + 0.3;
      return Math.fround(v);
    });
    checkEmpirically(new Sampler(p), logits, filteredSoftmax(penalized, p), history);
  });

  it("draws exactly what a penalty-free sampler draws from pre-penalized logits (same seed)", () => {
    for (const [seed, overrides] of [
      [1n, { temperature: 1 }],
      [2n, { temperature: 0.6, topK: 40 }],
      [3n, { temperature: 1.2, topP: 0.9, minP: 0.01 }],
    ] as const) {
      const logits = randomLogits(5000, seed + 100n, 3);
      const penalties = { repetitionPenalty: 1.3, presencePenalty: 0.4, frequencyPenalty: 0.3 };
      const mine = new Sampler(params({ ...overrides, ...penalties, seed }));
      const reference = new Sampler(params({ ...overrides, seed }));
      const rng = new Rng(seed);
      const prompt = Array.from({ length: 300 }, () => Math.floor(rng.nextFloat() * logits.length));
      const history = new TokenHistory(prompt);
      for (let step = 0; step < 200; step++) {
        const copy = Float32Array.from(logits, (l, id) => {
          const seen = history.inPrompt(id) || history.count(id) > 0;
          let v = seen ? (l > 0 ? l / 1.3 : l * 1.3) : l;
          const c = history.count(id);
          if (c > 0) v -= 0.3 * c + 0.4;
          return v;
        });
        const got = mine.sample(logits, 300 + step, history).tokenId;
        assert.equal(got, reference.sample(copy, 300 + step).tokenId, `step ${step}`);
        history.append(got);
      }
      assert.ok(history.outputLength === 200);
    }
  });

  it("is reproducible with a seed, and penalties off leave the draws unchanged", () => {
    const logits = randomLogits(1000, 31n, 1);
    const run = (overrides: Partial<SamplingParams>, withHistory: boolean) => {
      const sampler = new Sampler(params({ seed: 5n, ...overrides }));
      const history = new TokenHistory([1, 2, 3]);
      return Array.from({ length: 40 }, (_, i) => {
        const id = sampler.sample(logits, i, withHistory ? history : undefined).tokenId;
        history.append(id);
        return id;
      });
    };
    assert.deepEqual(run({}, true), run({}, false));
    assert.deepEqual(run({}, false), sequence(new Sampler(params({ seed: 5n })), logits, 40));
    const penalized = { repetitionPenalty: 1.5, frequencyPenalty: 1 };
    assert.deepEqual(run(penalized, true), run(penalized, true));
    assert.notDeepEqual(run(penalized, true), run({}, true));
  });

  it("min_p 1 keeps only the most likely tokens", () => {
    const logits = new Float32Array([1, 3, 2, 3]);
    const seen = new Set(sequence(new Sampler(params({ minP: 1, temperature: 2 })), logits, 500));
    assert.deepEqual([...seen].sort(), [1, 3]);
  });
});

describe("sampleRow (sampling where the logits are)", () => {
  it("picks what Sampler.sample picks, step after step, from the same seed (every knob, penalties, logprobs)", () => {
    const knobs = new Rng(42n);
    for (let trial = 0; trial < 60; trial++) {
      const pick = <T>(options: T[]): T => options[knobs.nextUint32() % options.length]!;
      const p = params({
        temperature: pick([0, 0.3, 1, 1.7]),
        topK: pick([0, 1, 5, 40]),
        topP: pick([1, 0.9, 0.5]),
        minP: pick([0, 0.05]),
        repetitionPenalty: pick([1, 1.3, 0.8]),
        presencePenalty: pick([0, 0.5]),
        frequencyPenalty: pick([0, -0.4, 0.7]),
        logprobs: pick([0, 3]),
        minTokens: pick([0, 4]),
        stopTokenIds: pick([[], [7, 9]]),
        seed: BigInt(trial),
      });
      const prompt = [3, 9, 9, 27, 81];
      const context = { eosTokenIds: [1, 9], promptLength: prompt.length };
      const here = new Sampler(p, context);
      const there = new Sampler(p, context);
      const historyHere = here.usesHistory ? new TokenHistory(prompt) : undefined;
      const historyThere = there.usesHistory ? new TokenHistory(prompt) : undefined;
      for (let step = 0; step < 8; step++) {
        const logits = randomLogits(128, BigInt(trial * 100 + step), 3);
        const row = there.prepare(prompt.length + step, historyThere);
        const remote = sampleRow(logits.slice(), row);
        const local = here.sample(logits, prompt.length + step, historyHere);
        assert.deepEqual(remote, local, `trial ${trial} step ${step}`);
        historyHere?.append(local.tokenId);
        historyThere?.append(remote.tokenId);
      }
    }
  });

  it("lists only the ids the penalties touch, and draws nothing when greedy", () => {
    const greedy = new Sampler(params({ temperature: 0, presencePenalty: 1 }));
    const history = historyOf([4, 4, 6], [6, 8, 8]);
    const row = greedy.prepare(6, history);
    assert.equal(row.draw, 0);
    assert.deepEqual([...row.penaltyIds], [6, 8]); // repetition off: generated ids only
    assert.deepEqual([...row.penaltyCounts], [1, 2]);
    const withRepetition = new Sampler(params({ repetitionPenalty: 1.2 })).prepare(6, history);
    assert.deepEqual([...withRepetition.penaltyIds], [4, 6, 8]);
    assert.deepEqual([...withRepetition.penaltyCounts], [0, 1, 2]);
    assert.ok(withRepetition.draw > 0 && withRepetition.draw < 1);
  });
});

describe("Sampler min_tokens", () => {
  const EOS = 2;
  const STOP = 5;
  const prompt = [7, 8, 9];
  // eos is the argmax, the stop id the runner-up, 11 the best of the rest.
  const logits = Float32Array.from({ length: 16 }, (_, id) =>
    id === EOS ? 9 : id === STOP ? 8 : id === 11 ? 3 : -id / 8,
  );
  const context = { eosTokenIds: [EOS], promptLength: prompt.length };

  it("holds eos and stop ids back for the first min_tokens tokens (greedy), then lets eos through", () => {
    const sampler = new Sampler(greedySampling({ minTokens: 5, stopTokenIds: [STOP] }), context);
    const picks = Array.from({ length: 7 }, (_, i) => sampler.sample(logits, prompt.length + i).tokenId);
    assert.deepEqual(picks, [11, 11, 11, 11, 11, EOS, EOS]);
    const off = new Sampler(greedySampling({ stopTokenIds: [STOP] }), context);
    assert.equal(off.sample(logits, prompt.length).tokenId, EOS, "min_tokens 0 holds nothing back");
  });

  it("with ignore_eos holds back only the stop ids", () => {
    const sampler = new Sampler(
      greedySampling({ minTokens: 3, stopTokenIds: [EOS + 1, STOP], ignoreEos: true }),
      context,
    );
    assert.equal(sampler.sample(logits, prompt.length).tokenId, EOS);
    const noEos = logits.slice();
    noEos[EOS] = -10;
    assert.equal(sampler.sample(noEos, prompt.length).tokenId, 11, "the stop id stays held back");
  });

  it("never samples a held-back id, reports raw logprobs and leaves the logits as they were", () => {
    const sampler = new Sampler(
      params({ temperature: 1.5, minTokens: 2, stopTokenIds: [STOP], logprobs: 3, presencePenalty: 1 }),
      context,
    );
    const history = historyOf(prompt, []);
    const before = logits.slice();
    const { logSumExp } = logitStats(logits);
    for (let i = 0; i < 200; i++) {
      const token = sampler.sample(logits, prompt.length + (i % 2), history);
      assert.notEqual(token.tokenId, EOS);
      assert.notEqual(token.tokenId, STOP);
      assert.ok(Math.abs(token.logprob - (logits[token.tokenId]! - logSumExp)) < 1e-9);
      assert.deepEqual(
        token.top.map((t) => t.tokenId),
        [EOS, STOP, 11],
        "alternatives are those of the raw logits",
      );
    }
    assert.deepEqual(logits, before);
  });

  it("holds back ids that a penalty also touches, beside a history of many distinct ids", () => {
    const wide = randomLogits(300, 9n);
    const many = Array.from({ length: 150 }, (_, i) => i * 2); // the even ids
    wide[4] = 50; // an even id (penalized by repetition) that is also an eos id
    wide[151] = 40; // an odd id, untouched by the penalty, that is a stop id
    const sampler = new Sampler(
      greedySampling({ minTokens: 1, repetitionPenalty: 1.5, stopTokenIds: [151] }),
      { eosTokenIds: [4, 299], promptLength: many.length },
    );
    const token = sampler.sample(wide, many.length, historyOf(many, []));
    const expected = new Sampler(greedySampling({ repetitionPenalty: 1.5 })).sample(
      Float32Array.from(wide, (v, id) => (id === 4 || id === 151 || id === 299 ? -Infinity : v)),
      many.length,
      historyOf(many, []),
    );
    assert.equal(token.tokenId, expected.tokenId);
    assert.ok(![4, 151, 299].includes(token.tokenId));
  });

  it("lists the held-back ids in a row only before min_tokens, and needs the prompt length", () => {
    const sampler = new Sampler(greedySampling({ minTokens: 2, stopTokenIds: [STOP, EOS] }), context);
    assert.deepEqual([...sampler.prepare(prompt.length + 1).heldBackIds], [STOP, EOS]);
    assert.deepEqual([...sampler.prepare(prompt.length + 2).heldBackIds], []);
    assert.equal(sampleRow(logits.slice(), sampler.prepare(prompt.length)).tokenId, 11);
    assert.throws(() => new Sampler(greedySampling({ minTokens: 1 })), /prompt length/);
  });
});

describe("Sampler logit_bias", () => {
  const logits = randomLogits(300, 11n);
  const top = logitStats(logits).argmax;

  it("adds each id's bias before picking: +100 forces an id, -100 removes the argmax (greedy and sampled)", () => {
    const forced = (top + 7) % 300;
    for (const temperature of [0, 1]) {
      const up = new Sampler(params({ temperature, logitBias: new Map([[forced, 100]]) }));
      assert.deepEqual(sequence(up, logits, 5), [forced, forced, forced, forced, forced]);
      const down = new Sampler(params({ temperature: 0, logitBias: new Map([[top, -100]]) }));
      assert.notEqual(down.sample(logits, 0).tokenId, top);
    }
  });

  it("samples the softmax of the biased logits, reports raw logprobs and leaves the logits as they were", () => {
    const bias = new Map([
      [3, 2.5],
      [top, -1.5],
    ]);
    const biased = Float32Array.from(logits, (v, id) => v + (bias.get(id) ?? 0));
    const copy = Float32Array.from(logits);
    const withBias = new Sampler(params({ seed: 5n, logitBias: bias }));
    const onBiased = new Sampler(params({ seed: 5n }));
    const { logSumExp } = logitStats(logits);
    for (let position = 0; position < 50; position++) {
      const got = withBias.sample(logits, position);
      assert.equal(got.tokenId, onBiased.sample(biased, position).tokenId);
      assert.ok(Math.abs(got.logprob - (logits[got.tokenId]! - logSumExp)) < 1e-5);
    }
    assert.deepEqual(logits, copy);
  });

  it("yields to min_tokens (a held-back id stays held back however it is biased) and travels in a row", () => {
    const eos = top;
    const sampler = new Sampler(params({ temperature: 0, minTokens: 2, logitBias: new Map([[eos, 100]]) }), {
      eosTokenIds: [eos],
      promptLength: 4,
    });
    assert.notEqual(sampler.sample(logits, 4).tokenId, eos);
    assert.equal(sampler.sample(logits, 6).tokenId, eos);
    const row = sampler.prepare(6);
    assert.deepEqual([...row.biasIds], [eos]);
    assert.equal(sampleRow(logits, row).tokenId, eos);
  });

  // Speculative decoding's rejection sampling weighs a draft's proposals with `distribution`: it must be
  // the one `sample` draws from, bias and held-back ids included, or the output leaves the target's.
  it("weighs the biased logits in distribution() as sample() does (held-back ids still out)", () => {
    const bias = new Map([
      [3, 2.5],
      [top, -1.5],
      [17, 100],
    ]);
    const biased = Float32Array.from(logits, (v, id) => v + (bias.get(id) ?? 0));
    const copy = Float32Array.from(logits);
    for (const knobs of [
      { temperature: 0.8, topK: 20 },
      { temperature: 1.3, topP: 0.9 },
      { temperature: 0 },
    ]) {
      const got = new Sampler(params({ ...knobs, logitBias: bias })).distribution(logits, 0);
      const want = new Sampler(params(knobs)).distribution(biased, 0);
      assert.deepEqual([...got.ids], [...want.ids]);
      for (const [i, p] of got.probs.entries()) assert.ok(Math.abs(p - want.probs[i]!) < 1e-12);
    }
    assert.deepEqual(logits, copy, "the logits are left as they were");
    // min_tokens holds eos back even at +100: it has no probability before the hold ends.
    const eos = 17;
    const held = new Sampler(params({ temperature: 1, minTokens: 2, logitBias: bias }), {
      eosTokenIds: [eos],
      promptLength: 4,
    });
    assert.ok(!held.distribution(logits, 4).ids.includes(eos));
    const after = held.distribution(logits, 6);
    assert.ok(after.probs[after.ids.indexOf(eos)]! > 0.99, "+100 takes nearly all the mass once allowed");
  });
});

// Speculative decoding through the whole engine, on the small trained Llama: the outputs (ids, text,
// finish reason) are those of non-speculative decoding, greedy and seeded-sampled, with continuous
// batching, chunked prefill, prefix caching, preemption, stop strings, max_tokens and min_tokens; no
// KV block is left held; the batch-size switch and the per-request opt-out turn it off.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { SamplingParams } from "../../inference/types.ts";
import { Engine, type EngineOptions } from "../engine/engine.ts";
import { MemoryKvTier } from "../engine/memory-kv-tier.ts";
import type { RemoteKvOptions } from "../engine/remote-kv.ts";
import { collectOutput, type Output } from "../testdata/collect-output.ts";
import { TRAINED_LLAMA_DIR, trainedLlamaReference } from "../testdata/trained-llama.ts";
import { parseSpeculativeConfig } from "./speculative-config.ts";

const DRAFT_DIR = path.join(TRAINED_LLAMA_DIR, "../trained-llama-draft");

const windows = trainedLlamaReference().heldout_ids;
// Prompts of several lengths, half of them sharing a 40-token prefix (prefix caching).
const prompts = [
  ...windows.map((w, i) => w.slice(0, 20 + 15 * i)),
  ...windows.map((w, i) => [...windows[0]!.slice(0, 40), ...w.slice(100, 110 + 7 * i)]),
];
const GREEDY = greedySampling({ maxTokens: 48, ignoreEos: true });
/** Per prompt: a mix of knobs that end generations in different ways. */
const variants: Partial<SamplingParams>[] = [
  {},
  { maxTokens: 7 },
  { stop: [" the"] },
  { minTokens: 20, ignoreEos: false, maxTokens: 30 },
  { maxTokens: 64 },
  { stop: ["License"], maxTokens: 40 },
  {},
  { maxTokens: 3 },
];

let n = 0;
function requests(sampling: (i: number) => Partial<SamplingParams>) {
  return prompts.map((promptIds, i) => ({
    requestId: `s${n++}`,
    promptIds,
    sampling: { ...GREEDY, ...variants[i % variants.length], ...sampling(i) },
  }));
}

async function run(options: EngineOptions, reqs: ReturnType<typeof requests>, concurrent = true) {
  const engine = await Engine.load(TRAINED_LLAMA_DIR, { threads: 1, ...options });
  try {
    const outs = concurrent
      ? await Promise.all(reqs.map((r) => collectOutput(engine.generate(r))))
      : await reqs.reduce(
          async (acc, r) => [...(await acc), await collectOutput(engine.generate(r))],
          Promise.resolve([] as Output[]),
        );
    assert.equal(engine.pool.numUsed, 0, "every KV block is released");
    engine.pool.checkInvariants();
    return { outs, stats: { ...engine.speculative?.stats }, preemptions: engine.engines.numPreemptions };
  } finally {
    await engine.close();
  }
}

const NGRAM = parseSpeculativeConfig({
  method: "ngram",
  num_speculative_tokens: 4,
  prompt_lookup_max: 3,
  prompt_lookup_min: 1,
});
const BASE: EngineOptions = { engine: { attention: "onnx-ops", maxNumSeqs: 1, enablePrefixCaching: false } };
// Chunked prefill (a 24-token budget), prefix caching, and a pool small enough to preempt.
const BUSY: EngineOptions = { engine: { attention: "onnx-ops", maxNumBatchedTokens: 24, kvCacheBlocks: 16 } };

describe("speculative decoding in the engine", function () {
  this.timeout(300_000);

  it("gives greedy requests their non-speculative output, batched, chunked, cached and preempted (n-gram)", async () => {
    const reqs = requests(() => ({}));
    const plain = await run(BASE, reqs, false);
    const spec = await run({ ...BUSY, speculative: NGRAM }, reqs);
    assert.deepEqual(spec.outs, plain.outs);
    assert.ok(spec.stats.accepted! > 0, "some proposals were accepted");
    assert.ok(spec.preemptions > 0, "the small pool preempted");
  });

  it("gives the same outputs with two scheduling loops sharing the pool (a parallel replica's virtual engines)", async () => {
    const reqs = requests(() => ({}));
    const plain = await run(BASE, reqs, false);
    const spec = await run(
      { engine: { attention: "onnx-ops", virtualEngines: 2, maxNumBatchedTokens: 32 }, speculative: NGRAM },
      reqs,
    );
    assert.deepEqual(spec.outs, plain.outs);
    assert.ok(spec.stats.accepted! > 0);
  });

  it("gives seeded sampled requests their non-speculative tokens (n-gram)", async () => {
    const reqs = requests((i) => ({
      temperature: 0.8,
      topP: 0.95,
      seed: BigInt(7 + i),
      repetitionPenalty: i % 2 ? 1.1 : 1,
    }));
    const plain = await run(BASE, reqs, false);
    const spec = await run({ ...BUSY, speculative: NGRAM }, reqs);
    assert.deepEqual(spec.outs, plain.outs);
    assert.ok(spec.stats.drafts! > 0);
  });

  it("does not speculate above disable_by_batch_size, nor for a request that opts out", async () => {
    const same = prompts.slice(0, 4).map((p) => p.slice(0, 20));
    const reqs = same.map((promptIds, i) => ({
      requestId: `d${i}`,
      promptIds,
      sampling: { ...GREEDY, maxTokens: 24 },
    }));
    // All four are admitted in the first step and end together: more than 3 run at every step.
    const WIDE: EngineOptions = { engine: { attention: "onnx-ops" } };
    const limited = await run({ ...WIDE, speculative: { ...NGRAM, disableByBatchSize: 3 } }, reqs);
    assert.equal(limited.stats.drafts, 0);
    const optOut = reqs.map((r) => ({ ...r, sampling: { ...r.sampling, disableSpeculation: true } }));
    const out = await run({ ...WIDE, speculative: NGRAM }, optOut);
    assert.equal(out.stats.drafts, 0);
    assert.deepEqual(out.outs, limited.outs);
    const on = await run({ ...WIDE, speculative: { ...NGRAM, disableByBatchSize: 4 } }, reqs);
    assert.ok(on.stats.drafts! > 0, "at the limit it speculates");
    assert.deepEqual(on.outs, limited.outs);
  });

  it("decodes from another engine's prefilled blocks (disaggregated) as colocated, storing the blocks it fills", async () => {
    const tier = new MemoryKvTier();
    const remote = (policy: "recompute" | "fail"): RemoteKvOptions => ({
      tier,
      readThrough: true,
      writeThrough: true,
      policy,
    });
    const prompt = windows[2]!.slice(0, 70);
    const colocated = (await run(BASE, [{ requestId: "k0", promptIds: prompt, sampling: GREEDY }])).outs[0]!
      .ids;
    const prefill = await Engine.load(TRAINED_LLAMA_DIR, {
      threads: 1,
      engine: { attention: "onnx-ops" },
      remoteKv: remote("recompute"),
    });
    const decode = await Engine.load(TRAINED_LLAMA_DIR, {
      threads: 1,
      engine: { attention: "onnx-ops" },
      remoteKv: remote("fail"),
      speculative: NGRAM,
    });
    try {
      const first = await collectOutput(
        prefill.generate({
          requestId: "k1",
          promptIds: prompt,
          sampling: { ...GREEDY, maxTokens: 1 },
          kv: { awaitWrites: true },
        }),
      );
      const handoff = [...prompt, ...first.ids];
      const rest = await collectOutput(
        decode.generate({
          requestId: "k2",
          promptIds: handoff,
          sampling: { ...GREEDY, maxTokens: GREEDY.maxTokens - 1 },
          kv: { expectedRemoteBlocks: Math.floor((handoff.length - 1) / 16) },
        }),
      );
      assert.deepEqual([...first.ids, ...rest.ids], colocated);
      assert.ok(decode.speculative!.stats.drafts > 0);
      assert.ok(decode.remote!.stats.stored > 0, "the decode engine stored the blocks it filled");
      assert.equal(decode.pool.numUsed, 0);
    } finally {
      await prefill.close();
      await decode.close();
    }
  });

  it("stops a cancelled request and releases its blocks", async () => {
    const engine = await Engine.load(TRAINED_LLAMA_DIR, { threads: 1, ...BUSY, speculative: NGRAM });
    try {
      const controller = new AbortController();
      const stream = engine.generate(
        { requestId: "c", promptIds: prompts[0]!, sampling: { ...GREEDY, maxTokens: 200 } },
        controller.signal,
      );
      const out: number[] = [];
      let reason: string | undefined;
      for await (const e of stream) {
        if (e.type === "tokens") out.push(...e.tokens.map((t) => t.tokenId));
        else reason = e.reason;
        if (out.length >= 10) controller.abort();
      }
      assert.equal(reason, "cancelled");
      assert.ok(out.length < 200);
      assert.equal(engine.pool.numUsed, 0);
    } finally {
      await engine.close();
    }
  });

  (existsSync(DRAFT_DIR) ? it : it.skip)(
    "samples the target's distribution with the draft model (two-sample chi-square over 2,000 seeds each)",
    async () => {
      // The second generated token is the first a verification step emits (the first comes from the
      // prompt's step): its histogram with the draft against without, disjoint seeds.
      const N = 2000;
      const prompt = windows[1]!.slice(0, 24);
      const secondTokens = async (options: EngineOptions, seed0: number) => {
        const engine = await Engine.load(TRAINED_LLAMA_DIR, { threads: 1, ...options });
        try {
          const outs = await Promise.all(
            Array.from({ length: N }, (_, i) =>
              collectOutput(
                engine.generate({
                  requestId: `x${seed0 + i}`,
                  promptIds: prompt,
                  sampling: { ...GREEDY, temperature: 1, maxTokens: 3, seed: BigInt(seed0 + i) },
                }),
              ),
            ),
          );
          return { ids: outs.map((o) => o.ids[1]!), stats: { ...engine.speculative?.stats } };
        } finally {
          await engine.close();
        }
      };
      const WIDE: EngineOptions = { engine: { attention: "onnx-ops", maxNumSeqs: 256 } };
      const draft = parseSpeculativeConfig({ model: DRAFT_DIR, num_speculative_tokens: 2 });
      const spec = await secondTokens({ ...WIDE, speculative: draft }, 0);
      const plain = await secondTokens(WIDE, N);
      assert.ok(
        spec.stats.accepted! > 100 && spec.stats.accepted! < spec.stats.draftTokens!,
        "some accepted, some not",
      );
      const statistic = twoSampleChiSquare(spec.ids, plain.ids);
      assert.ok(statistic.value < statistic.critical, JSON.stringify(statistic));
    },
  );

  (existsSync(DRAFT_DIR) ? it : it.skip)(
    "gives greedy requests their output with the trained draft model, and repeats seeded sampling",
    async () => {
      const draft = parseSpeculativeConfig({ model: DRAFT_DIR, num_speculative_tokens: 3 });
      const reqs = requests(() => ({}));
      const plain = await run(BASE, reqs, false);
      const spec = await run({ ...BUSY, speculative: draft }, reqs);
      assert.deepEqual(spec.outs, plain.outs);
      assert.ok(spec.stats.accepted! > 0);
      const sampled = requests((i) => ({ temperature: 1, seed: BigInt(3 + i) }));
      const a = await run({ ...BUSY, speculative: draft }, sampled);
      const b = await run({ ...BUSY, speculative: draft }, sampled);
      assert.deepEqual(a.outs, b.outs);
    },
  );
});

/**
 * Pearson's two-sample statistic over the tokens either sample drew at least 10 times together (the rest
 * one bin), and its critical value at P = 0.001 (Wilson-Hilferty's approximation of the chi-square
 * quantile for the bins' degrees of freedom).
 */
function twoSampleChiSquare(a: number[], b: number[]): { value: number; critical: number; bins: number } {
  const counts = new Map<number, [number, number]>();
  for (const id of a) counts.set(id, [(counts.get(id)?.[0] ?? 0) + 1, counts.get(id)?.[1] ?? 0]);
  for (const id of b) counts.set(id, [counts.get(id)?.[0] ?? 0, (counts.get(id)?.[1] ?? 0) + 1]);
  const bins: [number, number][] = [];
  const rest: [number, number] = [0, 0];
  for (const [x, y] of counts.values()) {
    if (x + y >= 10) bins.push([x, y]);
    else {
      rest[0] += x;
      rest[1] += y;
    }
  }
  if (rest[0] + rest[1] > 0) bins.push(rest);
  const value = bins.reduce((s, [x, y]) => s + (x - y) ** 2 / (x + y), 0);
  const df = bins.length - 1;
  const z = 3.0902; // the standard normal's 0.999 quantile
  const critical = df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
  return { value, critical, bins: bins.length };
}

// n, best_of, logit_bias and prompt logprobs on a real engine (tiny-llama, random weights).
import assert from "node:assert/strict";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GenerateEvent, PromptToken, SamplingParams } from "../../inference/types.ts";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { Engine } from "./engine.ts";

interface Sequence {
  ids: number[];
  logprobs: number[];
  text: string;
  reason: string | undefined;
  completionTokens: number;
}

async function collect(stream: AsyncIterable<GenerateEvent>) {
  const sequences = new Map<number, Sequence>();
  let prompt: PromptToken[] | undefined;
  for await (const e of stream) {
    const index = e.index ?? 0;
    const s = sequences.get(index) ?? {
      ids: [],
      logprobs: [],
      text: "",
      reason: undefined,
      completionTokens: 0,
    };
    sequences.set(index, s);
    s.text += e.textDelta;
    if (e.type === "tokens") {
      s.ids.push(...e.tokens.map((t) => t.tokenId));
      s.logprobs.push(...e.tokens.map((t) => t.logprob));
      if (e.promptTokens) prompt = e.promptTokens;
    } else {
      s.reason = e.reason;
      s.completionTokens = e.usage.completionTokens;
    }
  }
  return { sequences: [...sequences.keys()].sort().map((i) => sequences.get(i)!), prompt };
}

let nextId = 0;
const request = (promptIds: number[], sampling: Partial<SamplingParams>) => ({
  requestId: `seq${nextId++}`,
  promptIds,
  sampling: greedySampling({ maxTokens: 12, ignoreEos: true, ...sampling }),
});

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("Engine: several sequences of one request, logit_bias, prompt logprobs", function () {
  this.timeout(120_000);
  const cases = referenceCases("tiny-llama");
  // 16-token blocks: a prompt that ends inside a block, so each fork takes a copy of that tail block.
  const prompt = cases.map((c) => c.prompt_ids).find((ids) => ids.length % 16 !== 0 && ids.length > 16)!;
  let engine: Engine;
  before(async () => {
    // No prefix cache: every prompt token a request needs is computed, so the counter tells the forks
    // (which compute none) from separate requests (which compute the whole prompt each).
    engine = await Engine.load(path.join(REFERENCE_DIR, "tiny-llama"), {
      threads: 1,
      engine: { enablePrefixCaching: false },
    });
  });
  after(() => engine.close());

  it("n=4 gives 4 sequences from one prefill, sequence i as a lone request seeded seed + i gives it", async () => {
    const sampled = { temperature: 1, seed: 41n };
    const before = engine.numPromptTokensComputed;
    const together = await collect(engine.generate(request(prompt, { ...sampled, n: 4 })));
    assert.equal(engine.numPromptTokensComputed - before, prompt.length, "the prompt was computed once");
    assert.equal(together.sequences.length, 4);
    assert.equal(new Set(together.sequences.map((s) => s.ids.join(","))).size, 4, "4 distinct samples");
    const aloneBefore = engine.numPromptTokensComputed;
    for (let i = 0; i < 4; i++) {
      const alone = await collect(engine.generate(request(prompt, { ...sampled, seed: 41n + BigInt(i) })));
      assert.deepEqual(together.sequences[i]!.ids, alone.sequences[0]!.ids, `sequence ${i}`);
      assert.equal(together.sequences[i]!.text, alone.sequences[0]!.text);
      assert.equal(together.sequences[i]!.completionTokens, 12);
    }
    assert.equal(engine.numPromptTokensComputed - aloneBefore, 4 * prompt.length);
  });

  it("best_of=3, n=1 returns the sequence of highest cumulative logprob", async () => {
    const sampled = { temperature: 1.5, seed: 9n, maxTokens: 6 };
    const best = await collect(engine.generate(request(prompt, { ...sampled, bestOf: 3 })));
    assert.equal(best.sequences.length, 1);
    const alone = [];
    for (let i = 0; i < 3; i++)
      alone.push(
        (await collect(engine.generate(request(prompt, { ...sampled, seed: 9n + BigInt(i) })))).sequences[0]!,
      );
    const winner = alone.reduce((a, b) => (sum(b.logprobs) > sum(a.logprobs) ? b : a));
    assert.deepEqual(best.sequences[0]!.ids, winner.ids);
    assert.ok(new Set(alone.map((s) => s.ids.join(","))).size > 1, "the three differ");
  });

  it("logit_bias +100 forces its id; the reported logprob stays the raw model's", async () => {
    const plain = await collect(engine.generate(request(prompt, { maxTokens: 4 })));
    const forced = 77;
    assert.ok(!plain.sequences[0]!.ids.includes(forced));
    const biased = await collect(
      engine.generate(request(prompt, { maxTokens: 4, logitBias: new Map([[forced, 100]]) })),
    );
    assert.deepEqual(biased.sequences[0]!.ids, [forced, forced, forced, forced]);
    // Raw logprobs: a random model gives no token near-certainty, a +100 bias would give ~0.
    for (const lp of biased.sequences[0]!.logprobs) assert.ok(lp < -1, `${lp}`);
    const sampledBias = await collect(
      engine.generate(
        request(prompt, { maxTokens: 4, temperature: 1, seed: 3n, logitBias: new Map([[forced, 100]]) }),
      ),
    );
    assert.deepEqual(sampledBias.sequences[0]!.ids, [forced, forced, forced, forced]);
  });

  it("prompt logprobs: one entry per prompt token, the first without one, equal to what generation reports", async () => {
    const generated = await collect(engine.generate(request(prompt, { maxTokens: 1, logprobs: 2 })));
    const next = generated.sequences[0]!.ids[0]!;
    const extended = [...prompt, next];
    const got = await collect(engine.generate(request(extended, { maxTokens: 1, promptLogprobs: 2 })));
    const entries = got.prompt!;
    assert.equal(entries.length, extended.length);
    assert.equal(entries[0]!.logprob, undefined);
    assert.deepEqual(
      entries.map((e) => e.tokenId),
      extended,
    );
    for (const e of entries.slice(1)) {
      assert.ok(e.logprob! <= 0);
      assert.equal(e.top.length, 2);
    }
    // The last prompt token was the generated one: the same logprob from the prompt's logits.
    assert.ok(Math.abs(entries.at(-1)!.logprob! - generated.sequences[0]!.logprobs[0]!) < 1e-4);
  });
});

describe("Engine: prompt logprobs are never skipped by a prefix-cache hit", function () {
  this.timeout(120_000);
  let engine: Engine;
  before(async () => {
    engine = await Engine.load(path.join(REFERENCE_DIR, "tiny-llama"), { threads: 1 });
  });
  after(() => engine.close());

  it("a second request with the same prompt computes (and returns) every prompt position again", async () => {
    const prompt = referenceCases("tiny-llama")
      .map((c) => c.prompt_ids)
      .find((ids) => ids.length > 32)!;
    await collect(engine.generate(request(prompt, { maxTokens: 1 })));
    const cachedBefore = engine.numPromptTokensComputed;
    await collect(engine.generate(request(prompt, { maxTokens: 1 })));
    assert.ok(
      engine.numPromptTokensComputed - cachedBefore < prompt.length,
      "the cache serves a plain request",
    );
    const before = engine.numPromptTokensComputed;
    const got = await collect(engine.generate(request(prompt, { maxTokens: 1, promptLogprobs: 0 })));
    assert.equal(engine.numPromptTokensComputed - before, prompt.length);
    assert.equal(got.prompt!.length, prompt.length);
    assert.ok(got.prompt!.slice(1).every((e) => e.logprob !== undefined && e.logprob <= 0));
  });
});

describe("Engine: a request of several sequences that cannot run", function () {
  this.timeout(120_000);
  let engine: Engine;
  before(async () => {
    engine = await Engine.load(path.join(REFERENCE_DIR, "tiny-llama"), {
      threads: 1,
      engine: { blockSize: 4, kvCacheBlocks: 2 },
    });
  });
  after(() => engine.close());

  it("fails the request (not hangs) when its prompt can never fit the KV pool", async () => {
    const prompt = referenceCases("tiny-llama")[0]!.prompt_ids.slice(0, 12);
    await assert.rejects(
      collect(engine.generate(request(prompt, { n: 3, temperature: 1, seed: 1n }))),
      /KV blocks/,
    );
  });
});

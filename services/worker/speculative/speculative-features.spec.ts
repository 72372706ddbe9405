// A speculative worker serves the sampling features that came beside it with the outputs of a
// non-speculative one (trained Llama, n-gram proposals, greedy and seeded): logit_bias requests are
// speculated (verification samples with the bias), while structured-output, n > 1 and prompt-logprobs
// requests are not (their proposals would fight the mask, the forks or the prompt's logits rows) and
// still come out right beside speculated requests in the same batches.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GenerateEvent, PromptToken, SamplingParams } from "../../inference/types.ts";
import { Engine, type EngineOptions } from "../engine/engine.ts";
import { TRAINED_LLAMA_DIR, trainedLlamaReference } from "../testdata/trained-llama.ts";
import { parseSpeculativeConfig } from "./speculative-config.ts";

interface Sequence {
  ids: number[];
  text: string;
  reason: string | undefined;
}

interface Output {
  sequences: Sequence[];
  prompt: PromptToken[] | undefined;
}

async function collect(stream: AsyncIterable<GenerateEvent>): Promise<Output> {
  const sequences = new Map<number, Sequence>();
  let prompt: PromptToken[] | undefined;
  for await (const e of stream) {
    const index = e.index ?? 0;
    const s = sequences.get(index) ?? { ids: [], text: "", reason: undefined };
    sequences.set(index, s);
    s.text += e.textDelta;
    if (e.type === "tokens") {
      s.ids.push(...e.tokens.map((t) => t.tokenId));
      if (e.promptTokens) prompt = e.promptTokens;
    } else s.reason = e.reason;
  }
  return { sequences: [...sequences.keys()].sort().map((i) => sequences.get(i)!), prompt };
}

const windows = trainedLlamaReference().heldout_ids;
// Eight prompts of 24..87 tokens from the four held-out windows (the second four from further in).
const prompts = Array.from({ length: 8 }, (_, i) => {
  const from = 100 * Math.floor(i / 4);
  return windows[i % 4]!.slice(from, from + 24 + 9 * i);
});
const NGRAM = parseSpeculativeConfig({
  method: "ngram",
  num_speculative_tokens: 4,
  prompt_lookup_max: 3,
  prompt_lookup_min: 1,
});
const DRAFT_DIR = path.join(TRAINED_LLAMA_DIR, "../trained-llama-draft");
const OPTIONS: EngineOptions = { engine: { attention: "onnx-ops", maxNumBatchedTokens: 48 } };
const REGEX = "[a-z]+( [a-z]+){2,6}\\.";
const CHOICES = ["the river", "a small house", "nothing at all"];

/**
 * The same outputs: sequences exactly; prompt logprobs to 1e-4 (their rows are computed in batches of
 * another shape when speculated rows take another share of the token budget), their ids exactly.
 */
function assertSame(got: Output[], want: Output[]): void {
  assert.deepEqual(
    got.map((o) => o.sequences),
    want.map((o) => o.sequences),
  );
  for (const [i, o] of got.entries()) {
    const w = want[i]!.prompt;
    assert.equal(o.prompt?.length, w?.length);
    for (const [p, entry] of (o.prompt ?? []).entries()) {
      const expected = w![p]!;
      assert.equal(entry.tokenId, expected.tokenId);
      assert.deepEqual(
        entry.top.map((t) => t.tokenId),
        expected.top.map((t) => t.tokenId),
      );
      const close = (a: number | undefined, b: number | undefined) =>
        a === b || (a !== undefined && b !== undefined && Math.abs(a - b) <= 1e-4);
      assert.ok(close(entry.logprob, expected.logprob), `prompt token ${p}`);
      for (const [k, t] of entry.top.entries()) assert.ok(close(t.logprob, expected.top[k]!.logprob));
    }
  }
}

let nextId = 0;
const request = (promptIds: number[], sampling: Partial<SamplingParams>) => ({
  requestId: `f${nextId++}`,
  promptIds,
  sampling: greedySampling({ maxTokens: 40, ignoreEos: true, ...sampling }),
});

describe("speculative decoding with structured outputs, n > 1 and logit_bias", function () {
  this.timeout(300_000);
  let plain: Engine;
  let spec: Engine;
  before(async () => {
    plain = await Engine.load(TRAINED_LLAMA_DIR, { threads: 1, ...OPTIONS });
    spec = await Engine.load(TRAINED_LLAMA_DIR, { threads: 1, ...OPTIONS, speculative: NGRAM });
  });
  after(async () => {
    await plain?.close();
    await spec?.close();
  });

  /** Each request's output from both engines (all at once on each), and the proposals the run made. */
  async function both(samplings: { prompt: number[]; sampling: Partial<SamplingParams> }[]) {
    const want = await Promise.all(
      samplings.map((s) => collect(plain.generate(request(s.prompt, s.sampling)))),
    );
    const before = spec.speculative!.stats.drafts;
    const got = await Promise.all(
      samplings.map((s) => collect(spec.generate(request(s.prompt, s.sampling)))),
    );
    for (const engine of [plain, spec]) {
      assert.equal(engine.pool.numUsed, 0, "every KV block is released");
      engine.pool.checkInvariants();
    }
    return { want, got, drafts: spec.speculative!.stats.drafts - before };
  }

  it("speculates logit_bias requests, with the biased outputs of a non-speculative engine (greedy and seeded)", async () => {
    const unbiased = await collect(plain.generate(request(prompts[0]!, {})));
    // Ban the token greedy decoding picks third and favour another: the output must change.
    const bias = new Map([
      [unbiased.sequences[0]!.ids[2]!, -100],
      [(unbiased.sequences[0]!.ids[2]! + 1) % plain.description.vocabSize, 3],
    ]);
    const { want, got, drafts } = await both(
      prompts.map((prompt, i) => ({
        prompt,
        sampling:
          i % 2
            ? { logitBias: bias, temperature: 0.8, topP: 0.95, seed: BigInt(11 + i) }
            : { logitBias: bias },
      })),
    );
    assertSame(got, want);
    assert.notDeepEqual(
      want[0]!.sequences[0]!.ids,
      unbiased.sequences[0]!.ids,
      "the bias changed the output",
    );
    assert.ok(!want[0]!.sequences[0]!.ids.includes(unbiased.sequences[0]!.ids[2]!), "a -100 id never comes");
    assert.ok(drafts > 0, "the biased requests were speculated");
  });

  it("serves structured, n=2 and prompt-logprobs requests unspeculated, beside speculated ones, as without speculation", async () => {
    const special: { prompt: number[]; sampling: Partial<SamplingParams> }[] = [
      { prompt: prompts[1]!, sampling: { structured: { kind: "regex", pattern: REGEX } } },
      {
        prompt: prompts[2]!,
        sampling: { structured: { kind: "choice", choices: CHOICES }, temperature: 1, seed: 5n },
      },
      { prompt: prompts[3]!, sampling: { n: 2, temperature: 0.9, seed: 21n } },
      { prompt: prompts[4]!, sampling: { n: 2, bestOf: 3, temperature: 0.7, seed: 4n, maxTokens: 16 } },
      { prompt: prompts[5]!, sampling: { n: 2 } },
      { prompt: prompts[6]!, sampling: { promptLogprobs: 2, logprobs: 1 } },
    ];
    // Alone, none of them is speculated.
    const alone = await both(special);
    assertSame(alone.got, alone.want);
    assert.equal(alone.drafts, 0, "no proposal for structured, n > 1 or prompt-logprobs requests");

    // Beside plain requests that are speculated, in the same steps.
    const mixed = await both([
      ...special,
      ...prompts.slice(0, 4).map((prompt) => ({ prompt, sampling: {} })),
    ]);
    assertSame(mixed.got, mixed.want);
    assert.ok(mixed.drafts > 0, "the plain requests were speculated");

    const [regex, choice, n2, best, greedyTwo, withPrompt] = mixed.got;
    assert.match(regex!.sequences[0]!.text, new RegExp(`^${REGEX}$`));
    assert.equal(regex!.sequences[0]!.reason, "stop");
    assert.ok(CHOICES.includes(choice!.sequences[0]!.text), choice!.sequences[0]!.text);
    assert.equal(n2!.sequences.length, 2);
    assert.notDeepEqual(
      n2!.sequences[0]!.ids,
      n2!.sequences[1]!.ids,
      "each sequence draws with its own seed",
    );
    assert.equal(best!.sequences.length, 2);
    assert.deepEqual(greedyTwo!.sequences[0], greedyTwo!.sequences[1], "greedy sequences agree");
    assert.equal(withPrompt!.prompt?.length, prompts[6]!.length, "one entry per prompt token");
  });

  // A draft model proposes a greedy biased request's biased argmax (its Sampler's distribution), and a
  // sampled one's proposals from q with the bias; either way the greedy output is the target's.
  (existsSync(DRAFT_DIR) ? it : it.skip)(
    "gives greedy logit_bias requests their non-speculative output with a draft model",
    async () => {
      const unbiased = await collect(plain.generate(request(prompts[0]!, {})));
      const banned = unbiased.sequences[0]!.ids[1]!;
      const bias = new Map([[banned, -100]]);
      const draft = await Engine.load(TRAINED_LLAMA_DIR, {
        threads: 1,
        ...OPTIONS,
        speculative: parseSpeculativeConfig({ model: DRAFT_DIR, num_speculative_tokens: 3 }),
      });
      try {
        const reqs = prompts.slice(0, 4).map((prompt) => request(prompt, { logitBias: bias }));
        const want = await Promise.all(
          reqs.map((r) => collect(plain.generate({ ...r, requestId: `${r.requestId}p` }))),
        );
        const got = await Promise.all(reqs.map((r) => collect(draft.generate(r))));
        assertSame(got, want);
        for (const o of got) assert.ok(!o.sequences[0]!.ids.includes(banned));
        assert.ok(draft.speculative!.stats.accepted > 0, "some proposals were accepted");
        assert.equal(draft.pool.numUsed, 0);
      } finally {
        await draft.close();
      }
    },
  );
});

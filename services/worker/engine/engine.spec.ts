import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { FinishReason, GenerateEvent, SamplingParams } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { isNearTie, REFERENCE_DIR, REFERENCE_MODELS, referenceCases } from "../testdata/reference.ts";
import { Engine } from "./engine.ts";

const GREEDY: SamplingParams = greedySampling({ maxTokens: 24 });

interface Collected {
  ids: number[];
  text: string;
  reason: FinishReason | undefined;
  events: GenerateEvent[];
}

async function collect(stream: AsyncIterable<GenerateEvent>): Promise<Collected> {
  const out: Collected = { ids: [], text: "", reason: undefined, events: [] };
  for await (const e of stream) {
    out.events.push(e);
    out.text += e.textDelta;
    if (e.type === "tokens") out.ids.push(...e.tokens.map((t) => t.tokenId));
    else out.reason = e.reason;
  }
  return out;
}

let nextId = 0;
const request = (promptIds: number[], sampling: Partial<SamplingParams> = {}) => ({
  requestId: `r${nextId++}`,
  promptIds,
  sampling: { ...GREEDY, ...sampling },
});

for (const model of REFERENCE_MODELS) {
  describe(`Engine greedy generation on ${model}`, () => {
    let engine: Engine;
    before(async () => {
      engine = await Engine.load(path.join(REFERENCE_DIR, model), { threads: 1 });
    });
    after(() => engine.close());

    it("reproduces the reference greedy ids of every prompt (divergence only at a reference near-tie)", async () => {
      for (const c of referenceCases(model)) {
        const got = await collect(engine.generate(request(c.prompt_ids)));
        const firstDiff = got.ids.findIndex((id, i) => id !== c.output_ids[i]);
        if (firstDiff >= 0) {
          assert.ok(
            isNearTie(c.steps_top3[firstDiff]!),
            `"${c.prompt.slice(0, 30)}": diverged at step ${firstDiff}`,
          );
          continue;
        }
        assert.deepEqual(got.ids, c.output_ids);
        const stoppedOnEos = c.output_ids.at(-1) === 2;
        assert.equal(got.reason, stoppedOnEos ? "stop" : "length");
        const textIds = stoppedOnEos ? c.output_ids.slice(0, -1) : c.output_ids;
        assert.equal(got.text, engine.tokenizer.decode(textIds));
      }
    });
  });
}

describe("Engine requests", () => {
  let engine: Engine;
  const prompt = referenceCases("tiny-llama")[3]!.prompt_ids;
  before(async () => {
    engine = await Engine.load(path.join(REFERENCE_DIR, "tiny-llama"), { threads: 1 });
  });
  after(() => engine.close());

  it("gives each of several concurrent requests the output it gets alone", async () => {
    const alone = await collect(engine.generate(request(prompt, { ignoreEos: true })));
    const sampledAlone = await collect(engine.generate(request(prompt, { temperature: 0.8, seed: 7n })));
    const together = await Promise.all([
      collect(engine.generate(request(prompt, { ignoreEos: true }))),
      collect(engine.generate(request(prompt, { temperature: 0.8, seed: 7n }))),
      collect(engine.generate(request(referenceCases("tiny-llama")[1]!.prompt_ids))),
    ]);
    assert.deepEqual(together[0]!.ids, alone.ids);
    assert.deepEqual(together[1]!.ids, sampledAlone.ids);
  });

  it("repeats a seeded sampled output exactly and varies with the seed", async () => {
    const a = await collect(
      engine.generate(request(prompt, { temperature: 1, topP: 0.95, seed: 42n, ignoreEos: true })),
    );
    const b = await collect(
      engine.generate(request(prompt, { temperature: 1, topP: 0.95, seed: 42n, ignoreEos: true })),
    );
    const c = await collect(
      engine.generate(request(prompt, { temperature: 1, topP: 0.95, seed: 43n, ignoreEos: true })),
    );
    assert.deepEqual(a.ids, b.ids);
    assert.notDeepEqual(a.ids, c.ids);
  });

  it("continues a seeded sampled output when given its first tokens as prompt (a decode or migration segment)", async () => {
    // What the router asks of a decode worker, or of the worker a request migrates to: the prompt
    // plus the tokens streamed so far, and what remains of max_tokens.
    const sampling = { temperature: 0.9, topP: 0.9, seed: 2026n, ignoreEos: true, maxTokens: 16 };
    const whole = await collect(engine.generate(request(prompt, sampling)));
    assert.ok(new Set(whole.ids).size > 4, `sampled, not one repeated token: ${whole.ids}`);
    for (const split of [1, 6]) {
      const rest = await collect(
        engine.generate(
          request([...prompt, ...whole.ids.slice(0, split)], { ...sampling, maxTokens: 16 - split }),
        ),
      );
      assert.deepEqual(rest.ids, whole.ids.slice(split), `continued after ${split} token(s)`);
    }
  });

  it("stops at max_tokens with finish reason length and reports usage", async () => {
    const got = await collect(engine.generate(request(prompt, { maxTokens: 5, ignoreEos: true })));
    assert.equal(got.ids.length, 5);
    assert.equal(got.reason, "length");
    const last = got.events.at(-1)!;
    assert.deepEqual(last.type === "finish" && last.usage, {
      promptTokens: prompt.length,
      completionTokens: 5,
    });
  });

  it("stops before a stop string and never emits it", async () => {
    const full = await collect(engine.generate(request(prompt, { ignoreEos: true, maxTokens: 24 })));
    const stop = full.text.slice(6, 9);
    const got = await collect(
      engine.generate(request(prompt, { ignoreEos: true, maxTokens: 24, stop: [stop] })),
    );
    assert.equal(got.reason, "stop_string");
    assert.equal(got.text, full.text.slice(0, full.text.indexOf(stop)));
  });

  it("stops on a requested stop token id", async () => {
    const full = await collect(engine.generate(request(prompt, { ignoreEos: true })));
    const got = await collect(engine.generate(request(prompt, { stopTokenIds: [full.ids[3]!] })));
    assert.equal(got.reason, "stop");
    assert.deepEqual(got.ids, full.ids.slice(0, full.ids.indexOf(full.ids[3]!) + 1));
  });

  it("holds a stop token id back until min_tokens tokens were generated", async () => {
    const full = await collect(engine.generate(request(prompt, { ignoreEos: true })));
    const stopId = full.ids[3]!;
    const first = full.ids.indexOf(stopId);
    const got = await collect(
      engine.generate(request(prompt, { stopTokenIds: [stopId], minTokens: first + 4, ignoreEos: true })),
    );
    assert.ok(got.ids.length >= first + 4, `${got.ids.length} tokens`);
    assert.deepEqual(got.ids.slice(0, first), full.ids.slice(0, first));
    assert.ok(!got.ids.slice(0, first + 4).includes(stopId), "no stop id before min_tokens");
    assert.equal(got.reason === "stop", got.ids.at(-1) === stopId);
  });

  it("ends a cancelled request within one step", async () => {
    const controller = new AbortController();
    const got: number[] = [];
    let reason: string | undefined;
    for await (const e of engine.generate(
      request(prompt, { ignoreEos: true, maxTokens: 100 }),
      controller.signal,
    )) {
      if (e.type === "tokens") {
        got.push(...e.tokens.map((t) => t.tokenId));
        if (got.length === 3) controller.abort();
      } else reason = e.reason;
    }
    assert.equal(reason, "cancelled");
    assert.equal(got.length, 3);
  });

  it("rejects prompts that are empty, outside the vocabulary or longer than the context", () => {
    const invalid = (ids: number[]) =>
      assert.throws(
        () => engine.generate(request(ids)),
        (e: unknown) =>
          e instanceof TesseraError && e.code === Code.INVALID_ARGUMENT && /^prompt: /.test(e.message),
      );
    invalid([]);
    invalid([1, 512]);
    invalid(new Array(engine.description.maxContext).fill(5));
  });

  it("finishes with reason context when the context fills", async () => {
    const ids = new Array(engine.description.maxContext - 3).fill(5);
    const got = await collect(engine.generate(request(ids, { ignoreEos: true, maxTokens: 50 })));
    assert.equal(got.reason, "context");
    assert.equal(got.ids.length, 3);
  });
});

describe("Engine penalties", () => {
  let engine: Engine;
  const prompt = referenceCases("tiny-llama")[3]!.prompt_ids;
  before(async () => {
    engine = await Engine.load(path.join(REFERENCE_DIR, "tiny-llama"), { threads: 1 });
  });
  after(() => engine.close());

  it("never repeats a generated token under a strong presence penalty, and is unchanged without one", async () => {
    const plain = await collect(engine.generate(request(prompt, { ignoreEos: true, maxTokens: 40 })));
    assert.ok(new Set(plain.ids).size < plain.ids.length, "the greedy output repeats tokens");
    const penalized = await collect(
      engine.generate(
        request(prompt, { ignoreEos: true, maxTokens: 40, presencePenalty: 2, frequencyPenalty: 2 }),
      ),
    );
    // Every used token loses at least 4 from its logit: more than the spread of this model's top logits.
    assert.equal(new Set(penalized.ids).size, penalized.ids.length);
    const again = await collect(engine.generate(request(prompt, { ignoreEos: true, maxTokens: 40 })));
    assert.deepEqual(again.ids, plain.ids);
  });
});

describe("Engine on a bfloat16 checkpoint", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-engine-bf16-"));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it("reports bfloat16, or float32 when told to widen (--dtype float32), and generates the same ids either way", async () => {
    const dir = path.join(root, "llama-bf16");
    await createCheckpoint({ arch: "llama", preset: "tiny", seed: 3, out: dir, dtype: "bfloat16" });
    const prompt = [1, 5, 9, 14, 22, 31, 40];
    const run = async (widenWeights: boolean) => {
      const engine = await Engine.load(dir, { threads: 1, widenWeights });
      try {
        const out = await collect(engine.generate(request(prompt, { maxTokens: 12, ignoreEos: true })));
        return { dtype: engine.description.dtype, ids: out.ids };
      } finally {
        await engine.close();
      }
    };
    const kept = await run(false);
    const wide = await run(true);
    assert.equal(kept.dtype, "bfloat16");
    assert.equal(wide.dtype, "float32");
    assert.equal(kept.ids.length, 12);
    assert.deepEqual(wide.ids, kept.ids);
  });
});

describe("Engine min_tokens", () => {
  // tiny-mixtral's greedy output for this prompt ends on eos after 6 tokens.
  const model = "tiny-mixtral";
  const reference = referenceCases(model)[1]!;
  let engine: Engine;
  before(async () => {
    engine = await Engine.load(path.join(REFERENCE_DIR, model), { threads: 1 });
  });
  after(() => engine.close());

  it("generates at least min_tokens tokens where greedy decoding would stop on eos earlier", async () => {
    const plain = await collect(engine.generate(request(reference.prompt_ids)));
    const eos = plain.ids.at(-1)!;
    assert.equal(plain.reason, "stop");
    assert.ok(engine.eosTokenIds.includes(eos) && plain.ids.length < 10, `${plain.ids}`);
    const got = await collect(engine.generate(request(reference.prompt_ids, { minTokens: 10 })));
    assert.ok(got.ids.length >= 10, `${got.ids.length} tokens`);
    assert.deepEqual(got.ids.slice(0, plain.ids.length - 1), plain.ids.slice(0, -1));
    assert.ok(
      !got.ids.slice(0, 10).some((id) => engine.eosTokenIds.includes(id)),
      "no eos before min_tokens",
    );
    const last = got.events.at(-1)!;
    assert.equal(last.type === "finish" && last.usage.completionTokens, got.ids.length);
  });
});

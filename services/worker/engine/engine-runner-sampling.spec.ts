// An engine over a runner that samples (ModelRunner.samplesRows, as a parallel replica's last stage
// does; here the single-process runner, asked to sample in its model thread): each row it asks for
// carries its RowSampling, and the engine streams the runner's tokens. The requests generate exactly
// what they generate when the runner hands back logits rows and the engine samples them itself (seeded
// draws and penalties included), and a row the runner could not sample fails only its own request.
import assert from "node:assert/strict";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GeneratedToken, GenerateEvent, SamplingParams } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { ModelRunner, type ModelRunnerOptions } from "../runtime/model-runner.ts";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { Engine } from "./engine.ts";

const MODEL = path.join(REFERENCE_DIR, "tiny-llama");
const ENGINE = { attention: "onnx-ops" as const, blockSize: 4, kvCacheBlocks: 256 };
const prompts = referenceCases("tiny-llama").map((c) => c.prompt_ids);
/** Rows with this top_k are refused by the sampling runner below. */
const POISON_TOP_K = 7;

const SAMPLINGS: SamplingParams[] = [
  greedySampling({ maxTokens: 10, ignoreEos: true, logprobs: 3, repetitionPenalty: 1.2 }),
  greedySampling({
    maxTokens: 10,
    ignoreEos: true,
    temperature: 0.9,
    topP: 0.8,
    seed: 11n,
    presencePenalty: 0.6,
  }),
  greedySampling({
    maxTokens: 10,
    ignoreEos: true,
    temperature: 1.3,
    topK: 20,
    minP: 0.02,
    seed: 5n,
    logprobs: 2,
  }),
];

/**
 * Steps that came back as logits rows: a batch with a row others fork from (n > 1) or with prompt
 * logits asks for logits, as a parallel group's coordinator then returns them.
 */
let logitSteps = 0;

/** The single-process runner made to sample each row in its model thread; it refuses rows of top_k POISON_TOP_K. */
async function samplingRunner(o: ModelRunnerOptions): Promise<ModelRunner> {
  const inner = await ModelRunner.start(o);
  const step: ModelRunner["step"] = async (tokens, seqs) => {
    if (seqs.some((s) => s.promptLogits || (s.needsLogits && !s.sampling))) {
      logitSteps++;
      const result = await inner.step(tokens, seqs);
      assert.equal(result.tokens, undefined, "logits rows come back");
      return result;
    }
    const result = await inner.step(tokens, seqs);
    assert.equal(result.logits.length, 0, "sampled rows come back instead of logits");
    const asked = seqs.filter((s) => s.needsLogits);
    const rows = result.tokens!.map((row, i) =>
      asked[i]!.sampling!.topK === POISON_TOP_K ? { error: "poisoned row" } : row,
    );
    return { ...result, tokens: rows };
  };
  return Object.assign(Object.create(inner) as ModelRunner, { step, samplesRows: true });
}

async function generate(engine: Engine, id: string, promptIds: number[], sampling: SamplingParams) {
  const tokens: GeneratedToken[] = [];
  let reason: string | undefined;
  for await (const e of engine.generate({
    requestId: id,
    promptIds,
    sampling,
  }) as AsyncIterable<GenerateEvent>) {
    if (e.type === "tokens") tokens.push(...e.tokens);
    else reason = e.reason;
  }
  return { tokens, reason };
}

describe("Engine over a runner that samples", function () {
  this.timeout(60_000);
  let here: Engine;
  let there: Engine;
  before(async () => {
    here = await Engine.load(MODEL, { threads: 1, engine: ENGINE });
    there = await Engine.load(MODEL, { threads: 1, engine: ENGINE, startRunner: samplingRunner });
  });
  after(async () => {
    await here.close();
    await there.close();
  });

  it("generates what the engine generates when it samples itself (seeds, penalties, logprobs)", async () => {
    const cases = prompts.flatMap((p, i) => SAMPLINGS.map((s, j) => ({ p, s, id: `${i}-${j}` })));
    logitSteps = 0;
    const want = await Promise.all(cases.map((c) => generate(here, `a${c.id}`, c.p, c.s)));
    const got = await Promise.all(cases.map((c) => generate(there, `b${c.id}`, c.p, c.s)));
    assert.deepEqual(got, want);
    assert.equal(logitSteps, 0, "every row that needs logits said how to sample it");
  });

  it("n, logit_bias and prompt logprobs: the same sequences as when the engine samples itself", async () => {
    const sampling = {
      ...SAMPLINGS[1]!,
      n: 3,
      logitBias: new Map([[40, 3]]),
      promptLogprobs: 2,
    };
    const events = async (engine: Engine, id: string) => {
      const out: GenerateEvent[] = [];
      for await (const e of engine.generate({ requestId: id, promptIds: prompts[2]!, sampling })) out.push(e);
      return out.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    };
    const want = await events(here, "n-here");
    const got = await events(there, "n-there");
    assert.deepEqual(got, want);
    assert.equal(new Set(got.map((e) => e.index)).size, 3);
    assert.ok(got.some((e) => e.type === "tokens" && e.promptTokens?.length === prompts[2]!.length));
  });

  it("fails only the request whose row the runner could not sample", async () => {
    const poisoned = greedySampling({
      maxTokens: 10,
      ignoreEos: true,
      temperature: 1,
      topK: POISON_TOP_K,
      seed: 1n,
    });
    const [bad, good] = await Promise.allSettled([
      generate(there, "poisoned", prompts[0]!, poisoned),
      generate(there, "fine", prompts[1]!, SAMPLINGS[1]!),
    ]);
    assert.equal(bad.status, "rejected");
    const err = (bad as PromiseRejectedResult).reason;
    assert.ok(
      err instanceof TesseraError && err.code === Code.INTERNAL && /poisoned row/.test(err.message),
      String(err),
    );
    assert.equal(good.status === "fulfilled" && good.value.tokens.length, 10);
  });
});

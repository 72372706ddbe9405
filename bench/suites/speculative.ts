// `npm run bench -- speculative`: speculative decoding (issue 20) on the trained reference Llama
// (devtools/reference/trained-llama: 21.9M parameters, Brown corpus + State of the Union addresses) in the
// engine, each ratio against the same engine without speculation, measured in this run with the runs
// alternated (batch 1: request by request):
//   a. batch-1 greedy decode with the trained draft (trained-llama-draft: 1.44M parameters, trained the
//      same way), k=3 and k=1: held-out prompts, decode tokens per second (first token to last) and the
//      acceptance rate;
//   b. batch-1 greedy decode with n-gram proposals on a workload whose output copies from its prompt:
//      the model follows no instruction such as "repeat this text", so the prompt holds what it wrote
//      before: a held-out passage, the model's own greedy continuation of it, a blank line and the
//      passage again. A model that copies in context (this one mostly does) writes its continuation
//      again, which prompt lookup finds in the prompt. Also n-gram on plain held-out prompts;
//   c. 32 concurrent requests, tokens per second over the whole batch, with each method as configured
//      (disable_by_batch_size turns proposals off above it: the proposals made are recorded);
//   d. what one round costs, piece by piece, at batch 1 (step-costs.ts): the target's step for 1 token
//      and for k + 1, the draft's round of k steps, the n-gram lookup.
import fs from "node:fs";
import path from "node:path";
import { greedySampling } from "../../services/inference/sampling-params.ts";
import type { GenerateEvent, SamplingParams } from "../../services/inference/types.ts";
import { Tokenizer } from "../../services/tokenizer/tokenizer.ts";
import { Engine } from "../../services/worker/engine/engine.ts";
import { SafetensorsFile } from "../../services/worker/model/safetensors.ts";
import {
  parseSpeculativeConfig,
  type SpeculativeConfig,
} from "../../services/worker/speculative/speculative-config.ts";
import { TRAINED_LLAMA_DIR, TRAINED_LLAMA_HELDOUT } from "../../services/worker/testdata/trained-llama.ts";
import { type Check, check, writeResult } from "../report.ts";
import { stepCosts } from "./speculative/step-costs.ts";

const DRAFT_DIR = path.join(TRAINED_LLAMA_DIR, "../trained-llama-draft");
const PROMPTS = 8;
const PROMPT_TOKENS = 32;
const DECODE_TOKENS = 96;
const CONCURRENT = 32;
const ROUNDS = 3;
const COPIED_TOKENS = 64;

const CONFIGS: Record<"draft" | "draft1" | "ngram", SpeculativeConfig> = {
  draft: parseSpeculativeConfig({ model: DRAFT_DIR, num_speculative_tokens: 3, disable_by_batch_size: 4 }),
  draft1: parseSpeculativeConfig({ model: DRAFT_DIR, num_speculative_tokens: 1, disable_by_batch_size: 4 }),
  ngram: parseSpeculativeConfig({
    method: "ngram",
    num_speculative_tokens: 4,
    prompt_lookup_max: 4,
    prompt_lookup_min: 2,
    disable_by_batch_size: 16,
  }),
};

interface Timed {
  ids: number[];
  /** Milliseconds from the first token to the last. */
  decodeMs: number;
  e2eMs: number;
}

async function timed(stream: AsyncIterable<GenerateEvent>, started: number): Promise<Timed> {
  const ids: number[] = [];
  let first = 0;
  let last = 0;
  for await (const e of stream) {
    if (e.type !== "tokens") continue;
    const now = performance.now();
    if (ids.length === 0) first = now;
    last = now;
    ids.push(...e.tokens.map((t) => t.tokenId));
  }
  return { ids, decodeMs: last - first, e2eMs: last - started };
}

let n = 0;
const sampling = (maxTokens: number): SamplingParams => greedySampling({ maxTokens, ignoreEos: true });

function generate(engine: Engine, promptIds: number[], maxTokens: number): Promise<Timed> {
  const started = performance.now();
  return timed(engine.generate({ requestId: `b${n++}`, promptIds, sampling: sampling(maxTokens) }), started);
}

interface Pass {
  tokens: number;
  ms: number;
  outputs: number[][];
}

/**
 * Batch 1: the prompts one after the other, each on the base engine then on the speculative one (the
 * machine's load drifts within a pass: both sides see the same drift); decode tokens (after the first)
 * and their time.
 */
async function batchOne(base: Engine, spec: Engine, prompts: number[][], maxTokens: number) {
  const b: Pass = { tokens: 0, ms: 0, outputs: [] };
  const s: Pass = { tokens: 0, ms: 0, outputs: [] };
  for (const [i, p] of prompts.entries())
    for (const [engine, pass] of order(i, [base, b] as const, [spec, s] as const)) {
      const t = await generate(engine, p, maxTokens);
      pass.tokens += t.ids.length - 1;
      pass.ms += t.decodeMs;
      pass.outputs.push(t.ids);
    }
  return { b, s };
}

/** Which of two goes first alternates (a drifting load would otherwise favour one side). */
function order<T>(i: number, first: T, second: T): T[] {
  return i % 2 === 0 ? [first, second] : [second, first];
}

/** Both engines' concurrent passes, in alternating order from round to round. */
let concurrentRounds = 0;
async function concurrentPair(base: Engine, spec: Engine, prompts: number[][], maxTokens: number) {
  const out = new Map<Engine, Pass>();
  for (const e of order(concurrentRounds++, base, spec)) out.set(e, await concurrent(e, prompts, maxTokens));
  return { b: out.get(base)!, s: out.get(spec)! };
}

/** All prompts at once: every generated token over the wall time of the batch. */
async function concurrent(engine: Engine, prompts: number[][], maxTokens: number): Promise<Pass> {
  const started = performance.now();
  const outs = await Promise.all(prompts.map((p) => generate(engine, p, maxTokens)));
  return {
    tokens: outs.reduce((s, t) => s + t.ids.length, 0),
    ms: performance.now() - started,
    outputs: outs.map((t) => t.ids),
  };
}

interface Comparison {
  baseTokensPerSecond: number;
  specTokensPerSecond: number;
  speedup: number;
  sameOutputs: boolean;
  acceptanceRate: number;
  meanAcceptedLength: number;
  draftTokens: number;
  rounds: { base: number; spec: number }[];
}

/** Alternates base and speculative passes; tokens per second over all rounds, and the acceptance. */
async function compare(spec: Engine, round: () => Promise<{ b: Pass; s: Pass }>): Promise<Comparison> {
  const stats = spec.speculative!.stats;
  const before = { drafts: stats.drafts, draftTokens: stats.draftTokens, accepted: stats.accepted };
  const totals = { base: { tokens: 0, ms: 0 }, spec: { tokens: 0, ms: 0 } };
  const rounds: { base: number; spec: number }[] = [];
  let same = true;
  for (let r = 0; r < ROUNDS; r++) {
    const { b, s } = await round();
    same &&= JSON.stringify(b.outputs) === JSON.stringify(s.outputs);
    totals.base.tokens += b.tokens;
    totals.base.ms += b.ms;
    totals.spec.tokens += s.tokens;
    totals.spec.ms += s.ms;
    rounds.push({ base: (b.tokens / b.ms) * 1000, spec: (s.tokens / s.ms) * 1000 });
  }
  const drafts = stats.drafts - before.drafts;
  const draftTokens = stats.draftTokens - before.draftTokens;
  const accepted = stats.accepted - before.accepted;
  const baseTps = (totals.base.tokens / totals.base.ms) * 1000;
  const specTps = (totals.spec.tokens / totals.spec.ms) * 1000;
  return {
    baseTokensPerSecond: baseTps,
    specTokensPerSecond: specTps,
    speedup: specTps / baseTps,
    sameOutputs: same,
    acceptanceRate: draftTokens === 0 ? 0 : accepted / draftTokens,
    meanAcceptedLength: drafts === 0 ? 0 : 1 + accepted / drafts,
    draftTokens,
    rounds,
  };
}

/** A checkpoint's parameters in millions (one model.safetensors), for the description. */
function millions(dir: string): string {
  const file = SafetensorsFile.open(path.join(dir, "model.safetensors"));
  let n = 0;
  for (const t of file.tensors.values()) n += t.shape.reduce((a, b) => a * b, 1);
  return `${(n / 1e6).toFixed(n < 1e7 ? 2 : 1)}M`;
}

function load(speculative?: SpeculativeConfig): Promise<Engine> {
  return Engine.load(TRAINED_LLAMA_DIR, {
    threads: 1,
    engine: { attention: "onnx-ops" },
    ...(speculative && { speculative }),
  });
}

export async function run(): Promise<void> {
  const loadBefore = fs.readFileSync("/proc/loadavg", "utf8").trim();
  const ids = Tokenizer.fromModelDir(TRAINED_LLAMA_DIR).encode(
    fs.readFileSync(TRAINED_LLAMA_HELDOUT, "utf8"),
  );
  const stride = Math.floor((ids.length - PROMPT_TOKENS) / CONCURRENT);
  const all = Array.from({ length: CONCURRENT }, (_, i) => ids.slice(i * stride, i * stride + PROMPT_TOKENS));
  const prompts = all.slice(0, PROMPTS);
  const sizes = { target: millions(TRAINED_LLAMA_DIR), draft: millions(DRAFT_DIR) };
  const base = await load();
  const engines = {
    draft: await load(CONFIGS.draft),
    draft1: await load(CONFIGS.draft1),
    ngram: await load(CONFIGS.ngram),
  };
  try {
    // b's prompts: passage + the model's own continuation + "\n\n" + passage.
    const blank = Tokenizer.fromModelDir(TRAINED_LLAMA_DIR).encode("\n\n");
    // 32 + 64 + 1 + 32 prompt tokens and 96 generated stay inside the 256-token context.
    const continuations = (await batchOne(base, base, prompts, COPIED_TOKENS)).b.outputs;
    const copy = prompts.map((p, i) => [...p, ...continuations[i]!, ...blank, ...p]);

    const figures: Record<string, unknown> = {
      model: `trained-llama (${sizes.target} parameters, float16 checkpoint, computed in float32)`,
      draft: `trained-llama-draft (${sizes.draft} parameters, widened to float32 by its thread)`,
      configs: CONFIGS,
      prompts: PROMPTS,
      promptTokens: PROMPT_TOKENS,
      decodeTokens: DECODE_TOKENS,
      concurrent: CONCURRENT,
      rounds: ROUNDS,
      threads: 1,
    };
    const a = await compare(engines.draft, () => batchOne(base, engines.draft, prompts, DECODE_TOKENS));
    console.log("a. draft, batch 1", a);
    const a1 = await compare(engines.draft1, () => batchOne(base, engines.draft1, prompts, DECODE_TOKENS));
    console.log("a. draft k=1, batch 1", a1);
    const b = await compare(engines.ngram, () => batchOne(base, engines.ngram, copy, DECODE_TOKENS));
    console.log("b. n-gram, copy workload, batch 1", b);
    const plain = await compare(engines.ngram, () => batchOne(base, engines.ngram, prompts, DECODE_TOKENS));
    console.log("b'. n-gram, held-out prompts, batch 1", plain);
    const cDraft = await compare(engines.draft, () => concurrentPair(base, engines.draft, all, 64));
    console.log("c. draft, 32 concurrent", cDraft);
    const cNgram = await compare(engines.ngram, () => concurrentPair(base, engines.ngram, all, 64));
    console.log("c. n-gram, 32 concurrent", cNgram);
    // d. What a round costs, at the copy workload's context length.
    const costs = await stepCosts(TRAINED_LLAMA_DIR, DRAFT_DIR, copy[0]!.slice(0, 128), 3);
    console.log("d. step costs", costs);
    Object.assign(figures, {
      stepCosts: costs,
      draftBatch1: a,
      draftK1Batch1: a1,
      ngramCopyBatch1: b,
      ngramHeldoutBatch1: plain,
      draftConcurrent32: cDraft,
      ngramConcurrent32: cNgram,
      loadavgBefore: loadBefore,
      loadavgAfter: fs.readFileSync("/proc/loadavg", "utf8").trim(),
    });
    const checks: Check[] = [
      check("a. batch-1 decode speed-up with the draft model, k=3", a.speedup, ">=", 1.5),
      // k=1 is recorded (figures.draftK1Batch1) with no check: the issue names one draft-model target,
      // and one proposal a round cannot reach 1.5x (1.72 tokens a round at 72% acceptance, against a
      // 2-token verification at ~1.3x a step).
      check("b. batch-1 decode speed-up with n-gram, copy-from-prompt workload", b.speedup, ">=", 2),
      check("c. 32-concurrent throughput / non-speculative, draft model", cDraft.speedup, ">=", 0.95),
      check("c. 32-concurrent throughput / non-speculative, n-gram", cNgram.speedup, ">=", 0.95),
      check(
        "greedy outputs identical to non-speculative (all workloads; 1 = yes)",
        [a, a1, b, plain, cDraft, cNgram].every((c) => c.sameOutputs) ? 1 : 0,
        ">=",
        1,
      ),
    ];
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    const d = `target step ${ms(costs.targetStepMs)}, verification of ${costs.k + 1} tokens ${ms(costs.targetVerifyMs)} (×${(costs.targetVerifyMs / costs.targetStepMs).toFixed(2)}), draft round of ${costs.k} steps ${ms(costs.draftRoundMs)} (${ms(costs.draftRoundInThreadMs)} in its thread), n-gram lookup ${ms(costs.ngramLookupMs)}`;
    const f = (c: Comparison) =>
      `×${c.speedup.toFixed(2)} (${c.baseTokensPerSecond.toFixed(0)} -> ${c.specTokensPerSecond.toFixed(0)} tokens/s; acceptance ${(c.acceptanceRate * 100).toFixed(0)}%, mean accepted length ${c.meanAcceptedLength.toFixed(2)})`;
    writeResult({
      suite: "speculative",
      description: `Speculative decoding on the trained reference Llama (${sizes.target} parameters, 1 onnxruntime thread, greedy, eos ignored), each against the same engine without it, ${ROUNDS} rounds, base and speculative alternating request by request at batch 1 and batch by batch at 32 (which goes first alternating too): a. batch-1 decode (first to last token) over ${PROMPTS} held-out prompts of ${PROMPT_TOKENS} tokens, ${DECODE_TOKENS} tokens each, with the trained draft (${sizes.draft} parameters): k=3 ${f(a)}, k=1 ${f(a1)} (recorded, no target); b. the same with n-gram (k=4, n-gram 2-4) on a copy workload (passage + the model's own continuation + blank line + passage, meant to make the output copy from the prompt): ${f(b)}; on the plain held-out prompts: ${f(plain)}; c. ${CONCURRENT} concurrent requests (64 tokens each), disable_by_batch_size 4 (draft) and 16 (n-gram): draft ${f(cDraft)}, ${cDraft.draftTokens} tokens proposed; n-gram ${f(cNgram)}, ${cNgram.draftTokens} proposed; d. per-step costs at batch 1 after ${costs.past} tokens (medians of 200, alternating): ${d}. Load average before/after: ${loadBefore} / ${figures["loadavgAfter"]}.`,
      figures,
      checks,
    });
  } finally {
    await base.close();
    await engines.draft.close();
    await engines.draft1.close();
    await engines.ngram.close();
  }
}

// What one speculative round costs, piece by piece, at batch 1 (bench speculative, section d): the
// target's step for 1 token (plain decode) and for k + 1 tokens with k + 1 logits rows (a verification),
// through the engine's runner (thread round trip included), and the draft's round of k steps through its
// thread: wall time on the event loop and time inside the thread. Also the n-gram lookup over the
// prompt's tokens. Runs alternate within each round; medians over
// the rounds.
import { ModelRunner } from "../../../services/worker/runtime/model-runner.ts";
import { DraftWorker } from "../../../services/worker/speculative/draft-worker.ts";
import { lookup } from "../../../services/worker/speculative/ngram-proposer.ts";

const BLOCK = 16;
const ROUNDS = 200;

export interface StepCosts {
  /** Cached tokens before each timed step. */
  past: number;
  k: number;
  targetStepMs: number;
  targetVerifyMs: number;
  draftRoundMs: number;
  draftRoundInThreadMs: number;
  ngramLookupMs: number;
}

export async function stepCosts(
  targetDir: string,
  draftDir: string,
  prompt: number[],
  k: number,
): Promise<StepCosts> {
  const past = prompt.length;
  const blocks = Math.ceil((past + k + 1) / BLOCK);
  const table = Array.from({ length: blocks }, (_, i) => i);
  const options = { threads: 1, numBlocks: blocks, blockSize: BLOCK, attention: "onnx-ops" as const };
  const target = await ModelRunner.start({
    ...options,
    modelDir: targetDir,
    architectureOverride: undefined,
  });
  const draft = await DraftWorker.start({ ...options, modelDir: draftDir });
  try {
    await target.step(Int32Array.from(prompt), [
      { numPast: 0, numNew: past, blockTable: table, needsLogits: true },
    ]);
    const row = (numPast: number, feed: number[]) => ({ key: 1, numPast, feed, blockTable: table, k });
    await draft.propose([{ ...row(0, prompt), open: { kind: "argmax" } }], []);
    const last = prompt.at(-1)!;
    const times = {
      step: [] as number[],
      verify: [] as number[],
      round: [] as number[],
      inThread: [] as number[],
    };
    const timed = async (into: number[], f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      into.push(performance.now() - t0);
    };
    const step = () =>
      target.step(Int32Array.of(last), [{ numPast: past, numNew: 1, blockTable: table, needsLogits: true }]);
    const verify = Int32Array.from({ length: k + 1 }, (_, i) => prompt[i]!);
    // Each run overwrites the slots after `past`, so every round starts from the same cache. As in the
    // engines, the timed plain step follows a plain step, and the verification follows a draft round.
    for (let r = 0; r < ROUNDS; r++) {
      await step();
      await timed(times.step, step);
      await timed(times.round, async () => {
        const m = await draft.propose([row(past - 1, [last])], []);
        times.inThread.push(m.runMs);
      });
      await timed(times.verify, () =>
        target.step(verify, [
          { numPast: past, numNew: k + 1, blockTable: table, needsLogits: true, numLogits: k + 1 },
        ]),
      );
    }
    const t0 = performance.now();
    for (let r = 0; r < ROUNDS; r++) lookup(prompt, 2, 4, 4);
    return {
      past,
      k,
      targetStepMs: median(times.step),
      targetVerifyMs: median(times.verify),
      draftRoundMs: median(times.round),
      draftRoundInThreadMs: median(times.inThread),
      ngramLookupMs: (performance.now() - t0) / ROUNDS,
    };
  } finally {
    await target.close();
    await draft.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

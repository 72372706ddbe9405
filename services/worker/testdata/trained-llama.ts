// The small Llama trained on English prose by devtools/reference/train_small_llama.py (committed under
// devtools/reference/trained-llama/) and what transformers recorded for it in
// devtools/reference/expected/trained-llama.json: held-out token windows with their perplexity, and a
// greedy run from an English prompt.
import fs from "node:fs";
import path from "node:path";
import type { ModelRunner } from "../runtime/model-runner.ts";

const REFERENCE = path.join(import.meta.dirname, "../../../devtools/reference");
export const TRAINED_LLAMA_DIR = path.join(REFERENCE, "trained-llama");
export const TRAINED_LLAMA_HELDOUT = path.join(REFERENCE, "trained-llama-heldout.txt");

export interface TrainedLlamaReference {
  context: number;
  /** The held-out text's first windows of `context` tokens. */
  heldout_ids: number[][];
  /** Mean negative log-likelihood (nats per predicted token) transformers computes over the windows. */
  heldout_mean_nll: number;
  heldout_perplexity: number;
  prompt: string;
  prompt_ids: number[];
  /** Greedy ids, never stopped at eos. */
  output_ids: number[];
  output_text: string;
}

export const trainedLlamaReference = (): TrainedLlamaReference =>
  JSON.parse(
    fs.readFileSync(path.join(REFERENCE, "expected/trained-llama.json"), "utf8"),
  ) as TrainedLlamaReference;

/** log(sum(exp(row))) minus row[id], in float64: the token's negative log-likelihood. */
export function negativeLogLikelihood(row: Float32Array, id: number): number {
  let max = -Infinity;
  for (const x of row) max = Math.max(max, x);
  let sum = 0;
  for (const x of row) sum += Math.exp(x - max);
  return max + Math.log(sum) - row[id]!;
}

/**
 * Perplexity of `windows` under the runner's model, each window on its own from position 0, teacher
 * forced: the window's tokens go in one at a time through the KV cache (blocks 0.. of blockSize 16),
 * and each step's logits score the next token. Returns the mean negative log-likelihood and its exp,
 * and each step's most likely next token (to compare models' choices on the same contexts).
 */
export async function teacherForcedPerplexity(
  runner: ModelRunner,
  windows: number[][],
): Promise<{ meanNll: number; perplexity: number; argmax: number[] }> {
  let total = 0;
  let count = 0;
  const argmax: number[] = [];
  for (const ids of windows) {
    const blockTable = Array.from({ length: Math.ceil(ids.length / 16) }, (_, i) => i);
    for (let position = 0; position + 1 < ids.length; position++) {
      const { logits } = await runner.step(Int32Array.of(ids[position]!), [
        { numPast: position, numNew: 1, blockTable, needsLogits: true, promptLength: position + 1 },
      ]);
      total += negativeLogLikelihood(logits, ids[position + 1]!);
      argmax.push(logits.reduce((best, x, i) => (x > logits[best]! ? i : best), 0));
      count++;
    }
  }
  const meanNll = total / count;
  return { meanNll, perplexity: Math.exp(meanNll), argmax };
}

// The reference outputs of Hugging Face transformers for the tiny checkpoints in hf-reference/
// (see its README.md): greedy ids and the top-3 logits of every step.
import fs from "node:fs";
import path from "node:path";

export interface ReferenceCase {
  prompt: string;
  prompt_ids: number[];
  output_ids: number[];
  output_text: string;
  /** Per generated step: the top 3 [token id, logit] pairs. */
  steps_top3: [number, number][][];
  /** The first 16 logits at the last prompt position. */
  last_prompt_logits_head: number[];
}

export const REFERENCE_DIR = path.join(import.meta.dirname, "hf-reference");
export const REFERENCE_MODELS = ["tiny-llama", "tiny-mistral", "tiny-qwen2", "tiny-mixtral"] as const;

export function referenceCases(model: string): ReferenceCase[] {
  const expected = JSON.parse(fs.readFileSync(path.join(REFERENCE_DIR, "expected.json"), "utf8")) as {
    models: Record<string, { cases: ReferenceCase[] }>;
  };
  return expected.models[model]!.cases;
}

/** True when the reference's top two logits at a step are within 1e-3 (relative): a tie we may break differently. */
export function isNearTie(step: [number, number][]): boolean {
  const [a, b] = [step[0]![1], step[1]![1]];
  return Math.abs(a - b) <= 1e-3 * Math.max(Math.abs(a), Math.abs(b));
}

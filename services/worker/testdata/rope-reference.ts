// transformers' outputs for rope scaling (yarn, dynamic) and Mistral's sliding window, recorded by
// devtools/reference/rope.py in devtools/reference/expected/rope.json, and the tiny checkpoints they
// were made on: the model factory's, with the case's config.json fields set on top.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import type { Arch } from "../../../devtools/model-factory/presets.ts";

export interface RopePrompt {
  prompt_ids: number[];
  /** Greedy ids, never stopped at eos. */
  output_ids: number[];
  /** Per generated step: the top 3 [token id, logit] pairs. */
  steps_top3: [number, number][][];
  /** The first 16 logits at the last prompt position. */
  last_prompt_logits_head: number[];
}

export interface RopeCase {
  name: string;
  arch: Arch;
  seed: number;
  /** config.json fields set on the factory's checkpoint. */
  config: Record<string, unknown>;
  prompts: RopePrompt[];
}

export interface RopeTable {
  name: string;
  arch: Arch;
  config: Record<string, unknown>;
  /** The forward's length dynamic rope was computed for (null: the model's initial table). */
  seq_len: number | null;
  inv_freq: number[];
  attention_factor: number;
}

interface RopeReference {
  new_tokens: number;
  cases: RopeCase[];
  inverse_frequencies: RopeTable[];
}

const FILE = path.join(import.meta.dirname, "../../../devtools/reference/expected/rope.json");

export const ropeReference = (): RopeReference => JSON.parse(fs.readFileSync(FILE, "utf8")) as RopeReference;

export function ropeCase(name: string): RopeCase {
  const found = ropeReference().cases.find((c) => c.name === name);
  if (!found) throw new Error(`no rope reference case ${name}`);
  return found;
}

/**
 * Writes the case's checkpoint into a new temporary folder (the caller removes it) and returns it.
 * `fields` replace the case's config fields (to check that the variant matters).
 */
export async function makeRopeCheckpoint(c: RopeCase, fields = c.config): Promise<string> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `tessera-${c.name}-`));
  await createCheckpoint({ arch: c.arch, preset: "tiny", seed: c.seed, out });
  const file = path.join(out, "config.json");
  const config = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...config, ...fields }, null, 2));
  return out;
}

/** The case's config with the variant undone: default rope at the factory's context, no window. */
export function withoutVariant(c: RopeCase): Record<string, unknown> {
  const out: Record<string, unknown> = { ...c.config };
  if ("rope_parameters" in out) {
    const theta = (out["rope_parameters"] as { rope_theta: number }).rope_theta;
    out["rope_parameters"] = { rope_type: "default", rope_theta: theta };
    out["max_position_embeddings"] = 512;
  }
  if ("sliding_window" in out) out["sliding_window"] = null;
  return out;
}

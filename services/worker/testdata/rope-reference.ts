// transformers' outputs for rope scaling (yarn, dynamic) and Mistral's sliding window, recorded by
// devtools/reference/rope.py in devtools/reference/expected/rope.json, and the tiny checkpoints they
// were made on: the model factory's, with the case's config.json fields set on top.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import type { Arch } from "../../../devtools/model-factory/presets.ts";
import type { ModelRunner } from "../runtime/model-runner.ts";
import { isNearTie } from "./reference.ts";

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

/**
 * The logits after the prompt and after each reference token, on blocks 0..15 of a pool of at least
 * 16 blocks of 16. The prompt goes in two chunks, the second attending to the first through the cache
 * (and through the window); each step says the prompt's length, which dynamic rope rotates the prompt
 * for (as transformers' one prefill forward does).
 */
export async function teacherForced(runner: ModelRunner, c: RopeCase, n: number): Promise<Float32Array[]> {
  const p = c.prompts[n]!;
  const table = Array.from({ length: 8 }, (_, i) => (i * 3 + n) % 16);
  const promptLength = p.prompt_ids.length;
  const run = async (ids: number[], numPast: number) =>
    (
      await runner.step(Int32Array.from(ids), [
        { numPast, numNew: ids.length, blockTable: table, needsLogits: true, promptLength },
      ])
    ).logits;
  const split = Math.floor(promptLength * 0.6);
  await run(p.prompt_ids.slice(0, split), 0);
  const out = [await run(p.prompt_ids.slice(split), split)];
  let position = promptLength;
  for (const id of p.output_ids.slice(0, -1)) out.push(await run([id], position++));
  return out;
}

/** The logits tolerance of every transformers reference (as model-runner.spec.ts). */
export const LOGITS_TOLERANCE = 1e-3;

const argmax = (a: Float32Array) => a.reduce((best, x, i) => (x > a[best]! ? i : best), 0);

/** Every step's top-3 logits within 1e-3, and its greedy choice the reference's unless at a near-tie. */
export function assertMatchesReference(steps: Float32Array[], p: RopePrompt): void {
  let worst = 0;
  for (let i = 0; i < 16; i++)
    worst = Math.max(worst, Math.abs(steps[0]![i]! - p.last_prompt_logits_head[i]!));
  for (const [step, top3] of p.steps_top3.entries()) {
    const logits = steps[step]!;
    for (const [id, ref] of top3) worst = Math.max(worst, Math.abs(logits[id]! - ref));
    if (argmax(logits) !== p.output_ids[step])
      assert.ok(isNearTie(top3), `step ${step}: chose ${argmax(logits)}, reference ${p.output_ids[step]}`);
  }
  assert.ok(worst <= LOGITS_TOLERANCE, `largest logit difference ${worst} > ${LOGITS_TOLERANCE}`);
}

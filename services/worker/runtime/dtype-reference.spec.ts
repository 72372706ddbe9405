// Our engine on bfloat16 and float16 checkpoints against transformers
// (devtools/reference/expected/dtype.json). We keep the 16-bit weights and compute in float32;
// transformers on CPU computes in the checkpoint's dtype, rounding every activation and the logits
// to 16 bits. Teacher-forced on transformers' greedy tokens, every step's logits are within 1e-3 of
// transformers' float32 computation over the same 16-bit weights, with its greedy choice except at its
// near-ties (top 2 within 1e-3 relative); and the greedy choice is that of transformers computing in
// 16 bits except where its top two are within its own arithmetic's error: 4 units in the last place
// of the dtype, relative (float16 3.9e-3, bfloat16 3.1e-2). At a 1e-3 threshold the float16 cases
// would fail: transformers' float16 arithmetic itself turns some choices with a 2e-3 margin around
// (its float32 computation of the same weights chooses as we do there).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type CheckpointDtype, createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import type { Arch } from "../../../devtools/model-factory/presets.ts";
import { ATTENTION_BACKENDS } from "../graph/attention-backend.ts";
import { isNearTie } from "../testdata/reference.ts";
import { ModelRunner } from "./model-runner.ts";

type Top3 = [number, number][];

interface DtypePrompt {
  prompt_ids: number[];
  as_saved: { output_ids: number[]; steps_top3: Top3[] };
  float32: { steps_top3: Top3[]; last_prompt_logits_head: number[] };
}

interface DtypeCase {
  name: string;
  arch: Arch;
  seed: number;
  dtype: Exclude<CheckpointDtype, "float32">;
  prompts: DtypePrompt[];
}

const FILE = path.join(import.meta.dirname, "../../../devtools/reference/expected/dtype.json");
const CASES = (JSON.parse(fs.readFileSync(FILE, "utf8")) as { cases: DtypeCase[] }).cases;
const LOGITS_TOLERANCE = 1e-3;
/** 4 units in the last place (relative) of the dtype transformers computed in. */
const SAVED_TIE: Record<DtypeCase["dtype"], number> = { float16: 4 * 2 ** -10, bfloat16: 4 * 2 ** -7 };

const argmax = (a: Float32Array) => a.reduce((best, x, i) => (x > a[best]! ? i : best), 0);

function within(step: Top3, relative: number): boolean {
  const [a, b] = [step[0]![1], step[1]![1]];
  return Math.abs(a - b) <= relative * Math.max(Math.abs(a), Math.abs(b));
}

/** The logits after the prompt (in two chunks) and after each of transformers' tokens but the last. */
async function teacherForced(runner: ModelRunner, p: DtypePrompt, n: number): Promise<Float32Array[]> {
  const table = Array.from({ length: 4 }, (_, i) => (i * 3 + n) % 8);
  const run = async (ids: number[], numPast: number) =>
    (
      await runner.step(Int32Array.from(ids), [
        { numPast, numNew: ids.length, blockTable: table, needsLogits: true },
      ])
    ).logits;
  const split = Math.ceil(p.prompt_ids.length / 2);
  await run(p.prompt_ids.slice(0, split), 0);
  const out = [await run(p.prompt_ids.slice(split), split)];
  let position = p.prompt_ids.length;
  for (const id of p.as_saved.output_ids.slice(0, -1)) out.push(await run([id], position++));
  return out;
}

for (const c of CASES) {
  for (const attention of ATTENTION_BACKENDS) {
    describe(`ModelRunner on ${c.name} (${attention} attention) against transformers`, () => {
      let dir: string;
      let runner: ModelRunner;
      before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), `tessera-${c.name}-`));
        await createCheckpoint({ arch: c.arch, preset: "tiny", seed: c.seed, out: dir, dtype: c.dtype });
        runner = await ModelRunner.start({
          modelDir: dir,
          architectureOverride: undefined,
          threads: 1,
          numBlocks: 8,
          blockSize: 16,
          attention,
        });
      });
      after(async () => {
        await runner.close();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      for (const [n, p] of c.prompts.entries()) {
        it(`decodes transformers' greedy ids (prompt of ${p.prompt_ids.length} tokens)`, async () => {
          const steps = await teacherForced(runner, p, n);
          let worst = 0;
          for (let i = 0; i < 16; i++)
            worst = Math.max(worst, Math.abs(steps[0]![i]! - p.float32.last_prompt_logits_head[i]!));
          for (const [step, logits] of steps.entries()) {
            const f32 = p.float32.steps_top3[step]!;
            for (const [id, ref] of f32) worst = Math.max(worst, Math.abs(logits[id]! - ref));
            const chose = argmax(logits);
            if (chose !== f32[0]![0])
              assert.ok(isNearTie(f32), `step ${step}: chose ${chose}, float32 reference ${f32[0]![0]}`);
            const saved = p.as_saved.output_ids[step]!;
            if (chose !== saved)
              assert.ok(
                within(p.as_saved.steps_top3[step]!, SAVED_TIE[c.dtype]),
                `step ${step}: chose ${chose}, transformers in ${c.dtype} ${saved}`,
              );
          }
          assert.ok(worst <= LOGITS_TOLERANCE, `largest logit difference ${worst} > ${LOGITS_TOLERANCE}`);
        });
      }
    });
  }
}

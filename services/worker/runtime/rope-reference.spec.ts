// Our graph reproduces transformers with yarn and dynamic rope scaling and with Mistral's sliding
// window (devtools/reference/expected/rope.json): teacher-forced on the reference's own tokens, the
// logits of every step within 1e-3 and the same greedy choice except at a reference near-tie, on
// both attention backends. Prompts are longer than the original context (yarn, dynamic) or several
// windows long, and decoding crosses max_position_embeddings (dynamic) and the window.
import assert from "node:assert/strict";
import fs from "node:fs";
import { ATTENTION_BACKENDS } from "../graph/attention-backend.ts";
import { isNearTie } from "../testdata/reference.ts";
import {
  makeRopeCheckpoint,
  type RopeCase,
  ropeReference,
  withoutVariant,
} from "../testdata/rope-reference.ts";
import { ModelRunner } from "./model-runner.ts";

const TOLERANCE = 1e-3;
const BLOCK_SIZE = 16;

const argmax = (a: Float32Array) => a.reduce((best, x, i) => (x > a[best]! ? i : best), 0);

async function startRunner(dir: string, attention: (typeof ATTENTION_BACKENDS)[number]) {
  return ModelRunner.start({
    modelDir: dir,
    architectureOverride: undefined,
    threads: 1,
    numBlocks: 16,
    blockSize: BLOCK_SIZE,
    attention,
  });
}

/**
 * The logits after the prompt and after each reference token. Dynamic rope takes the prompt in one
 * step, as transformers' generate does (its scaling depends on the forward's length); the others in
 * two chunks, the second attending to the first through the cache (and through the window).
 */
async function teacherForced(runner: ModelRunner, c: RopeCase, n: number): Promise<Float32Array[]> {
  const p = c.prompts[n]!;
  const table = Array.from({ length: 8 }, (_, i) => (i * 3 + n) % 16);
  const run = async (ids: number[], numPast: number) =>
    (
      await runner.step(Int32Array.from(ids), [
        { numPast, numNew: ids.length, blockTable: table, needsLogits: true },
      ])
    ).logits;
  const dynamic = JSON.stringify(c.config).includes('"dynamic"');
  const split = dynamic ? 0 : Math.floor(p.prompt_ids.length * 0.6);
  if (split > 0) await run(p.prompt_ids.slice(0, split), 0);
  const out = [await run(p.prompt_ids.slice(split), split)];
  let position = p.prompt_ids.length;
  for (const id of p.output_ids.slice(0, -1)) out.push(await run([id], position++));
  return out;
}

for (const c of ropeReference().cases) {
  for (const attention of ATTENTION_BACKENDS) {
    describe(`ModelRunner with ${c.name} (${attention} attention) against transformers`, () => {
      let dir: string;
      let runner: ModelRunner;
      before(async () => {
        dir = await makeRopeCheckpoint(c);
        runner = await startRunner(dir, attention);
      });
      after(async () => {
        await runner.close();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      for (const [n, p] of c.prompts.entries()) {
        it(`matches the reference logits and greedy ids (prompt of ${p.prompt_ids.length} tokens)`, async () => {
          const steps = await teacherForced(runner, c, n);
          let worst = 0;
          for (let i = 0; i < 16; i++)
            worst = Math.max(worst, Math.abs(steps[0]![i]! - p.last_prompt_logits_head[i]!));
          for (const [step, top3] of p.steps_top3.entries()) {
            const logits = steps[step]!;
            for (const [id, ref] of top3) worst = Math.max(worst, Math.abs(logits[id]! - ref));
            if (argmax(logits) !== p.output_ids[step])
              assert.ok(
                isNearTie(top3),
                `step ${step}: chose ${argmax(logits)}, reference ${p.output_ids[step]}`,
              );
          }
          assert.ok(worst <= TOLERANCE, `largest logit difference ${worst} > ${TOLERANCE}`);
        });
      }
    });
  }

  describe(`${c.name} without its variant`, () => {
    it("drifts from the reference (the variant is what the reference checks)", async () => {
      const dir = await makeRopeCheckpoint(c, withoutVariant(c));
      const runner = await startRunner(dir, "onnx-ops");
      try {
        const p = c.prompts[0]!;
        const steps = await teacherForced(runner, c, 0);
        const worst = p.steps_top3.reduce(
          (m, top3, step) => Math.max(m, ...top3.map(([id, ref]) => Math.abs(steps[step]![id]! - ref))),
          0,
        );
        assert.ok(worst > 0.05, `largest logit difference only ${worst}`);
      } finally {
        await runner.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

// The graph Tessera builds reproduces Hugging Face transformers on every reference checkpoint:
// the logits of every step (teacher-forced on the reference's own tokens) within 1e-3, and the same
// greedy choice except at a step where the reference itself has a near tie.
import assert from "node:assert/strict";
import path from "node:path";
import { isNearTie, REFERENCE_DIR, REFERENCE_MODELS, referenceCases } from "../testdata/reference.ts";
import { ModelRunner } from "./model-runner.ts";

const TOLERANCE = 1e-3;

function argmax(a: Float32Array): number {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i]! > a[best]!) best = i;
  return best;
}

for (const model of REFERENCE_MODELS) {
  describe(`ModelRunner on ${model}`, () => {
    let runner: ModelRunner;
    before(async () => {
      runner = await ModelRunner.start({
        modelDir: path.join(REFERENCE_DIR, model),
        architectureOverride: undefined,
        threads: 1,
      });
    });
    after(() => runner.close());

    for (const [n, c] of referenceCases(model).entries()) {
      it(`matches the reference logits and greedy ids (prompt ${n}, ${c.prompt_ids.length} tokens)`, async () => {
        const seq = runner.newSequence();
        let logits = await runner.step(seq, c.prompt_ids, 0);
        let worst = 0;
        for (let i = 0; i < 16; i++)
          worst = Math.max(worst, Math.abs(logits[i]! - c.last_prompt_logits_head[i]!));
        let position = c.prompt_ids.length;
        for (const [step, top3] of c.steps_top3.entries()) {
          for (const [id, ref] of top3) worst = Math.max(worst, Math.abs(logits[id]! - ref));
          const expected = c.output_ids[step]!;
          if (argmax(logits) !== expected) {
            assert.ok(
              isNearTie(top3),
              `step ${step}: chose ${argmax(logits)}, reference ${expected} (no near tie)`,
            );
          }
          if (step + 1 < c.output_ids.length) logits = await runner.step(seq, [expected], position++);
        }
        runner.free(seq);
        assert.ok(worst <= TOLERANCE, `largest logit difference ${worst} > ${TOLERANCE}`);
      });
    }
  });
}

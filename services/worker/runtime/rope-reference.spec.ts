// Our graph reproduces transformers with yarn and dynamic rope scaling and with Mistral's sliding
// window (devtools/reference/expected/rope.json): teacher-forced on the reference's own tokens, the
// logits of every step within 1e-3 and the same greedy choice except at a reference near-tie, on
// both attention backends. Prompts are longer than the original context (yarn, dynamic) or several
// windows long, and decoding crosses max_position_embeddings (dynamic) and the window.
import assert from "node:assert/strict";
import fs from "node:fs";
import { ATTENTION_BACKENDS } from "../graph/attention-backend.ts";
import {
  assertMatchesReference,
  makeRopeCheckpoint,
  ropeReference,
  teacherForced,
  withoutVariant,
} from "../testdata/rope-reference.ts";
import { ModelRunner } from "./model-runner.ts";

async function startRunner(dir: string, attention: (typeof ATTENTION_BACKENDS)[number]) {
  return ModelRunner.start({
    modelDir: dir,
    architectureOverride: undefined,
    threads: 1,
    numBlocks: 16,
    blockSize: 16,
    attention,
  });
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
          assertMatchesReference(await teacherForced(runner, c, n), p);
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

// `--quantization int8|int4` on the transformers reference checkpoints (testdata/hf-reference):
// teacher-forced on transformers' greedy tokens, the quantized engine's logits stay close to the float32
// engine's, and its greedy choices mostly agree with transformers'. int8 is held to tighter bounds
// than int4. Block size 32, symmetric and asymmetric, int4 in blocks of 128, longer than a row, and int8
// per channel (its default).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { QuantOptions } from "../model/quantize-blocks.ts";
import { ModelRunner } from "./model-runner.ts";

interface RefCase {
  prompt_ids: number[];
  output_ids: number[];
}

const DIR = path.join(import.meta.dirname, "../testdata/hf-reference");
const MODELS = (
  JSON.parse(fs.readFileSync(path.join(DIR, "expected.json"), "utf8")) as {
    models: Record<string, { cases: RefCase[] }>;
  }
).models;

const argmax = (a: Float32Array) => a.reduce((best, x, i) => (x > a[best]! ? i : best), 0);

async function start(model: string, quantization?: QuantOptions): Promise<ModelRunner> {
  return ModelRunner.start({
    modelDir: path.join(DIR, model),
    architectureOverride: undefined,
    ...(quantization && { quantization }),
    threads: 1,
    numBlocks: 32,
    blockSize: 16,
    attention: "onnx-ops",
  });
}

/** Logits after the prompt and after each of transformers' tokens but the last. */
async function teacherForced(runner: ModelRunner, c: RefCase): Promise<Float32Array[]> {
  const table = Array.from({ length: 32 }, (_, i) => i);
  const run = async (ids: number[], numPast: number) =>
    (
      await runner.step(Int32Array.from(ids), [
        { numPast, numNew: ids.length, blockTable: table, needsLogits: true },
      ])
    ).logits;
  const out = [await run(c.prompt_ids, 0)];
  let position = c.prompt_ids.length;
  for (const id of c.output_ids.slice(0, -1)) out.push(await run([id], position++));
  return out;
}

/**
 * Largest |logit - float32 logit| relative to the float32 logits' range, and greedy agreement with
 * transformers, as measured (block 32, accuracy_level 4): int8 2-5% (mixtral 21%: a router flip), 85-94%
 * agreement; int4 36-72%, 21-49%. These random-weight tiny models (hidden 96) are the worst case for
 * int4: i.i.d. weights with no structure; the bounds catch a wrong layout (agreement near 0).
 */
const BOUNDS = {
  int8: { relative: 0.25, agreement: 0.85 },
  int4: { relative: 0.8, agreement: 0.2 },
};
/**
 * int8 per channel on tiny-mixtral: 26% (42% asymmetric) and 45-47 of 54:
 * its router's top-2 among 4 experts flips on small changes of the hidden state (21% at block 32 too),
 * and one flip moves every later logit. The dense models stay at 4.9-6.0% and 90-94%, as block 32.
 */
const MOE_PER_CHANNEL = { relative: 0.5, agreement: 0.8 };
const SETTINGS: [keyof typeof BOUNDS, QuantOptions][] = [
  ["int8", { bits: 8, blockSize: 32, symmetric: true }],
  // int8's default: one scale per output feature, MatMulInteger with int8 activations per row.
  ["int8", { bits: 8, blockSize: "channel", symmetric: true }],
  ["int8", { bits: 8, blockSize: "channel", symmetric: false }],
  ["int4", { bits: 4, blockSize: 32, symmetric: true }],
  ["int4", { bits: 4, blockSize: 32, symmetric: false }],
  // Blocks longer than a row (hidden 96): each row of q/k/v/gate/up is one partial block.
  ["int4", { bits: 4, blockSize: 128, symmetric: true }],
];

for (const model of Object.keys(MODELS)) {
  describe(`--quantization on ${model} against float32 and transformers`, () => {
    const cases = MODELS[model]!.cases.slice(1, 4);
    let reference: Float32Array[][];
    before(async () => {
      const runner = await start(model);
      reference = [];
      for (const c of cases) reference.push(await teacherForced(runner, c));
      await runner.close();
    });

    for (const [label, q] of SETTINGS) {
      const name = `${label} block ${q.blockSize}${q.symmetric ? "" : " asymmetric"}`;
      it(`${name}: logits close to float32's, greedy ids mostly transformers'`, async () => {
        const runner = await start(model, q);
        let worst = 0;
        let agree = 0;
        let steps = 0;
        for (const [n, c] of cases.entries()) {
          const got = await teacherForced(runner, c);
          for (const [s, logits] of got.entries()) {
            const ref = reference[n]![s]!;
            const range = Math.max(...ref) - Math.min(...ref);
            for (let i = 0; i < ref.length; i++)
              worst = Math.max(worst, Math.abs(logits[i]! - ref[i]!) / range);
            if (s < c.output_ids.length) {
              steps++;
              if (argmax(logits) === c.output_ids[s]) agree++;
            }
          }
        }
        await runner.close();
        console.log(
          `${model} ${name}: max |diff| ${(worst * 100).toFixed(2)}% of the logit range, greedy ${agree}/${steps}`,
        );
        const bound =
          model.includes("mixtral") && q.blockSize === "channel" ? MOE_PER_CHANNEL : BOUNDS[label];
        assert.ok(worst < bound.relative, `max diff ${worst} of the range`);
        assert.ok(agree >= bound.agreement * steps, `greedy agreement ${agree}/${steps}`);
      });
    }
  });
}

// The same weights give the same logits whichever format the checkpoint stores them in: one file or
// shards, float32 or half precision (which only rounds the weights).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type CheckpointDtype, createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { ModelRunner } from "./model-runner.ts";

const PROMPT = [5, 17, 42, 99, 100, 7, 300, 12];

async function logitsOf(dir: string): Promise<Float32Array> {
  const runner = await ModelRunner.start({
    modelDir: dir,
    architectureOverride: undefined,
    threads: 1,
    numBlocks: 4,
    blockSize: 16,
    attention: "onnx-ops",
  });
  try {
    const seq = (numPast: number, numNew: number) => ({
      numPast,
      numNew,
      blockTable: [2, 0],
      needsLogits: true,
    });
    await runner.step(Int32Array.from(PROMPT.slice(0, 5)), [seq(0, 5)]);
    return (await runner.step(Int32Array.from(PROMPT.slice(5)), [seq(5, PROMPT.length - 5)])).logits;
  } finally {
    await runner.close();
  }
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

describe("checkpoint formats", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-formats-"));
  const make = async (name: string, dtype: CheckpointDtype, maxShardBytes?: number) => {
    const out = path.join(root, name);
    await createCheckpoint({
      arch: "mixtral",
      preset: "tiny",
      seed: 11,
      out,
      dtype,
      ...(maxShardBytes ? { maxShardBytes } : {}),
    });
    return out;
  };
  let reference: Float32Array;
  before(async () => {
    reference = await logitsOf(await make("f32", "float32"));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it("reads a sharded checkpoint to exactly the same logits", async () => {
    const dir = await make("sharded", "float32", 200_000);
    assert.ok(fs.existsSync(path.join(dir, "model.safetensors.index.json")));
    assert.deepEqual(await logitsOf(dir), reference);
  });

  for (const dtype of ["float16", "bfloat16"] as const) {
    it(`loads ${dtype} weights and stays close to float32`, async () => {
      const dir = await make(dtype, dtype);
      assert.equal(describeCheckpoint(dir).dtype, dtype);
      const logits = await logitsOf(dir);
      const spread = Math.max(...reference) - Math.min(...reference);
      assert.ok(maxDiff(logits, reference) < spread * (dtype === "float16" ? 0.01 : 0.05));
    });
  }
});

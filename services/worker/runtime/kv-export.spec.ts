// Blocks copied out of the pool and written back elsewhere carry the sequence exactly: decoding from
// the copies gives bit-identical logits.
import assert from "node:assert/strict";
import path from "node:path";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { ModelRunner } from "./model-runner.ts";

describe("ModelRunner block export and import", () => {
  let runner: ModelRunner;
  before(async () => {
    runner = await ModelRunner.start({
      modelDir: path.join(REFERENCE_DIR, "tiny-qwen2"),
      architectureOverride: undefined,
      threads: 1,
      numBlocks: 32,
      blockSize: 16,
      attention: "onnx-ops",
    });
  });
  after(() => runner.close());

  it("moves a sequence's K/V to other blocks without changing what it generates", async () => {
    const prompt = referenceCases("tiny-qwen2")[0]!.prompt_ids.slice(0, 64);
    const original = [0, 1, 2, 3, 4];
    const copy = [20, 9, 31, 15, 4 + 20];
    await runner.step(Int32Array.from(prompt), [
      { numPast: 0, numNew: 64, blockTable: original, needsLogits: true },
    ]);
    const data = await runner.exportBlocks(original.slice(0, 4));
    assert.equal(data.length, 4 * 2 * 2 * 16 * 2 * 16); // blocks × layers × (k,v) × tokens × kvHeads × headDim
    await runner.importBlocks(copy.slice(0, 4), data);
    const next = (table: number[]) =>
      runner.step(Int32Array.of(42), [{ numPast: 64, numNew: 1, blockTable: table, needsLogits: true }]);
    const fromOriginal = (await next(original)).logits;
    const fromCopy = (await next(copy)).logits;
    assert.deepEqual(fromCopy, fromOriginal);
  });

  it("rejects blocks outside the pool and data of the wrong size", async () => {
    await assert.rejects(runner.exportBlocks([32]), /no block 32/);
    await assert.rejects(runner.importBlocks([1], new Float32Array(7)), /needs/);
  });
});

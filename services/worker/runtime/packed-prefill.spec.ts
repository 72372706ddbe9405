// Prefill chunks of different shapes in one step are packed into one attention row where that is
// smaller than padding them to the longest (step-inputs.ts, issue 18). Packed or not, every sequence
// must get the logits it gets alone: a chunk sees its own past and its own earlier tokens, nothing else.
import assert from "node:assert/strict";
import path from "node:path";
import { onnxOpsAttention } from "../graph/attention-onnx-ops.ts";
import { wholeModel } from "../graph/shard-graph.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { argmaxRows } from "../testdata/local-ranks.ts";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { allocateShardPool, ShardExecutor } from "./shard-executor.ts";
import { buildStepInputs, type SequenceStep } from "./step-inputs.ts";

const BLOCK_SIZE = 4;

for (const model of ["tiny-llama", "tiny-mistral"]) {
  describe(`packed prefill chunks on ${model}`, () => {
    let executor: ShardExecutor;
    let vocab: number;
    const prompt = referenceCases(model)[0]!.prompt_ids;

    before(async () => {
      const dir = path.join(REFERENCE_DIR, model);
      const checkpoint = describeCheckpoint(dir);
      vocab = checkpoint.config.vocabSize;
      const spec = wholeModel(checkpoint.config.numLayers);
      const pool = allocateShardPool(checkpoint.config, spec, 32, BLOCK_SIZE);
      executor = await ShardExecutor.create(checkpoint, WeightStore.open(dir), onnxOpsAttention, spec, pool, {
        blockSize: BLOCK_SIZE,
        threads: 1,
        alone: true,
      });
    });
    after(() => executor.release());

    it("gives each chunk of a packed step the logits it gets alone", async () => {
      const x = prompt.slice(0, 15); // 12 cached tokens, then a chunk of 3
      const y = prompt.slice(3, 12); // a fresh chunk of 9, in other blocks
      const xTable = [0, 1, 2, 3];
      const yTable = [8, 9, 10];
      const tokens = (ids: number[]) => Int32Array.from(ids);
      await executor.run([{ numPast: 0, numNew: 12, blockTable: xTable, needsLogits: false }], {
        tokens: tokens(x.slice(0, 12)),
      });
      const xChunk: SequenceStep = { numPast: 12, numNew: 3, blockTable: xTable, needsLogits: true };
      const yChunk: SequenceStep = { numPast: 0, numNew: 9, blockTable: yTable, needsLogits: true };
      const step = [yChunk, xChunk];
      assert.equal(buildStepInputs(step, BLOCK_SIZE).groups.prefill.batch, 1, "the two chunks are packed");

      const packed = await executor.run(step, { tokens: tokens([...y, ...x.slice(12)]) });
      const yAlone = await executor.run([yChunk], { tokens: tokens(y) });
      const xAlone = await executor.run([xChunk], { tokens: tokens(x.slice(12)) });
      const alone = new Float32Array([...yAlone, ...xAlone]);
      assert.equal(packed.length, alone.length);
      const diff = Math.max(...packed.map((v, i) => Math.abs(v - alone[i]!)));
      assert.ok(diff < 1e-4, `packed logits differ from each chunk's alone by ${diff}`);
      assert.deepEqual(argmaxRows(packed, vocab), argmaxRows(alone, vocab));
    });
  });
}

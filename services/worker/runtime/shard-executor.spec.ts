// The shard graphs reproduce the whole model (the one shard of a single process, checked against
// transformers in model-runner.spec.ts): pipeline stages run one after the other, tensor ranks run side
// by side with an in-memory all-reduce, and the logits equal the whole model's within 1e-4 with the
// same greedy ids, on every reference architecture. The ranks of a stage hand on bit-identical hidden
// states. The executor copies blocks out of its pool and in only where they are. (The real transport
// is tested in services/worker/parallel.)
import assert from "node:assert/strict";
import path from "node:path";
import type { AttentionBackend } from "../graph/attention-backend.ts";
import { msGqaAttention } from "../graph/attention-ms-gqa.ts";
import { onnxOpsAttention } from "../graph/attention-onnx-ops.ts";
import { sharedPrefixAttention } from "../graph/attention-shared-prefix.ts";
import type { WeightSource } from "../graph/graph-names.ts";
import { planSegments, type ShardSpec, wholeModel } from "../graph/shard-graph.ts";
import type { Checkpoint } from "../model/checkpoint.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { evenPart } from "../model/tensor-slice.ts";
import { WeightStore } from "../model/weights.ts";
import { argmaxRows, localGroup } from "../testdata/local-ranks.ts";
import { REFERENCE_DIR, REFERENCE_MODELS } from "../testdata/reference.ts";
import { allocateShardPool, type ShardEntry, ShardExecutor } from "./shard-executor.ts";
import type { SequenceStep } from "./step-inputs.ts";
import { joinVocabSlices } from "./vocab-slices.ts";

const BLOCKS = 16;
const BLOCK_SIZE = 4;

/** A shard's executor over a pool of its own: `alone` as a single process runs it, else as a group member. */
function executor(
  checkpoint: Checkpoint,
  weights: WeightSource,
  attention: AttentionBackend,
  spec: ShardSpec,
  o: { alone: boolean; cut?: boolean },
): Promise<ShardExecutor> {
  const pool = allocateShardPool(checkpoint.config, spec, BLOCKS, BLOCK_SIZE);
  return ShardExecutor.create(checkpoint, weights, attention, spec, pool, {
    blockSize: BLOCK_SIZE,
    threads: 1,
    ...o,
  });
}

/** A replica in one process: executors[stage][rank]; the ranks of a stage must agree bit for bit. */
async function runReplica(
  executors: ShardExecutor[][],
  tokens: Int32Array,
  seqs: SequenceStep[],
  vocab: number,
): Promise<Float32Array> {
  let entry: ShardEntry = { tokens };
  let outs: Float32Array[] = [];
  for (const [s, stage] of executors.entries()) {
    const group = localGroup(stage.length);
    outs = await Promise.all(stage.map((e, rank) => e.run(seqs, entry, group[rank]!)));
    if (s === executors.length - 1) break;
    for (const o of outs) assert.deepEqual(o, outs[0], "the ranks of a stage hand on the same hidden states");
    entry = { hidden: outs[0]! };
  }
  return joinVocabSlices(outs, vocab);
}

const LAYOUTS = [
  { name: "PP=2", stages: 2, ranks: 1, attention: onnxOpsAttention },
  { name: "TP=2", stages: 1, ranks: 2, attention: onnxOpsAttention },
  { name: "TP=2 x PP=2", stages: 2, ranks: 2, attention: onnxOpsAttention },
  { name: "TP=2 x PP=2 (GroupQueryAttention decode)", stages: 2, ranks: 2, attention: msGqaAttention },
  { name: "TP=2 x PP=2 (shared-prefix decode)", stages: 2, ranks: 2, attention: sharedPrefixAttention },
] as const;

for (const model of REFERENCE_MODELS)
  describe(`ShardExecutor on ${model}`, () => {
    const dir = path.join(REFERENCE_DIR, model);
    const checkpoint = describeCheckpoint(dir);
    const weights = WeightStore.open(dir);
    const { vocabSize: vocab, numLayers } = checkpoint.config;

    it("plans 2 segments per layer and a head under tensor parallelism, one graph without", () => {
      assert.equal(
        planSegments({ layers: { start: 0, end: numLayers }, tensor: { rank: 0, size: 2 } }, numLayers)
          .length,
        2 * numLayers + 1,
      );
      assert.equal(
        planSegments({ layers: { start: 1, end: numLayers }, tensor: { rank: 0, size: 1 } }, numLayers)
          .length,
        1,
      );
    });

    it("cut at the all-reduce points with identity all-reduces, gives the whole graph's logits", async () => {
      const spec = wholeModel(numLayers);
      const whole = await executor(checkpoint, weights, onnxOpsAttention, spec, { alone: true });
      const cut = await executor(checkpoint, weights, onnxOpsAttention, spec, { alone: false, cut: true });
      assert.equal(whole.numSegments, 1);
      assert.equal(cut.numSegments, 2 * numLayers + 1);
      const seqs = [{ numPast: 0, numNew: 5, blockTable: [2, 3], needsLogits: true }];
      const tokens = Int32Array.of(4, 8, 15, 16, 23);
      const expected = await whole.run(seqs, { tokens });
      const got = await cut.run(seqs, { tokens }, async (_segment, partial) => partial);
      assert.ok(got.every((x, i) => Math.abs(x - expected[i]!) <= 1e-5));
      await whole.release();
      await cut.release();
    });

    for (const layout of LAYOUTS)
      it(`${layout.name} gives the whole model's logits within 1e-4 and its greedy ids`, async () => {
        const whole = await executor(checkpoint, weights, layout.attention, wholeModel(numLayers), {
          alone: true,
        });
        const executors: ShardExecutor[][] = [];
        for (let s = 0; s < layout.stages; s++) {
          const layers = evenPart(numLayers, layout.stages, s);
          executors.push(
            await Promise.all(
              Array.from({ length: layout.ranks }, (_, rank) =>
                executor(
                  checkpoint,
                  weights,
                  layout.attention,
                  { layers, tensor: { rank, size: layout.ranks } },
                  { alone: false },
                ),
              ),
            ),
          );
        }
        const a = [5, 17, 33, 41, 2, 9, 100, 250, 7, 3];
        const b = [11, 12, 13, 14, 15, 16, 17];
        let seqs: SequenceStep[] = [
          { numPast: 0, numNew: a.length, blockTable: [3, 0, 7, 9, 12], needsLogits: true },
          { numPast: 0, numNew: b.length, blockTable: [1, 2, 4, 5, 6], needsLogits: true },
        ];
        let tokens = Int32Array.from([...a, ...b]);
        let worst = 0;
        for (let step = 0; step < 6; step++) {
          const expected = await whole.run(seqs, { tokens });
          const got = await runReplica(executors, tokens, seqs, vocab);
          assert.equal(got.length, expected.length);
          for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i]! - expected[i]!));
          const ids = argmaxRows(expected, vocab);
          assert.deepEqual(argmaxRows(got, vocab), ids, `greedy ids at step ${step}`);
          tokens = Int32Array.from(ids);
          seqs = seqs.map((s) => ({ ...s, numPast: s.numPast + s.numNew, numNew: 1 }));
        }
        assert.ok(worst <= 1e-4, `largest logit difference ${worst}`);
        await whole.release();
        for (const e of executors.flat()) await e.release();
      });
  });

// GPTQ and AWQ checkpoints against an outside oracle: devtools/reference/prequantized.py quantizes
// tiny-qwen2's projections and packs them as AutoGPTQ and AutoAWQ do (from their source, not from our
// reader), and writes the float weights (q - zero) * scale they stand for. Our engine on the packed
// checkpoint must give the float checkpoint's logits (1e-3 of the largest) and greedy ids, whole and
// split over two tensor-parallel ranks, with MatMulNBits computing in float32 (accuracy_level 0); the
// default int8-activation path (level 4) stays close. The packed matrices stay packed in the graph.
import assert from "node:assert/strict";
import path from "node:path";
import { onnxOpsAttention } from "../graph/attention-onnx-ops.ts";
import type { WeightSource } from "../graph/graph-names.ts";
import { type ShardSpec, wholeModel } from "../graph/shard-graph.ts";
import { type Checkpoint, describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { argmaxRows, localGroup } from "../testdata/local-ranks.ts";
import { ModelRunner } from "./model-runner.ts";
import { allocateShardPool, ShardExecutor } from "./shard-executor.ts";
import type { SequenceStep } from "./step-inputs.ts";
import { joinVocabSlices } from "./vocab-slices.ts";

const DIR = path.join(import.meta.dirname, "../testdata/prequantized");
const BLOCKS = 16;
const BLOCK_SIZE = 4;

/** The store's weights with MatMulNBits at `accuracyLevel`. */
function atLevel(w: WeightStore, accuracyLevel: number): WeightSource {
  return {
    has: (n) => w.has(n),
    read: (n, s) => w.read(n, s),
    readSlice: (n, s, sl) => w.readSlice(n, s, sl),
    readStored: (n, s, sl) => w.readStored(n, s, sl),
    readPrequantized: (n, s, sl) => w.readPrequantized(n, s, sl),
    nbitsAccuracyLevel: accuracyLevel,
  };
}

function executor(checkpoint: Checkpoint, weights: WeightSource, spec: ShardSpec): Promise<ShardExecutor> {
  const pool = allocateShardPool(checkpoint.config, spec, BLOCKS, BLOCK_SIZE);
  return ShardExecutor.create(checkpoint, weights, onnxOpsAttention, spec, pool, {
    blockSize: BLOCK_SIZE,
    threads: 1,
    alone: spec.tensor.size === 1,
  });
}

/** A model: one executor, or two tensor-parallel ranks run side by side. */
type Model = (seqs: SequenceStep[], tokens: Int32Array) => Promise<Float32Array>;

async function load(
  model: string,
  o: { level: number; ranks: 1 | 2 },
): Promise<{ run: Model; close: () => Promise<void>; graphBytes: number }> {
  const dir = path.join(DIR, model);
  const checkpoint = describeCheckpoint(dir);
  const weights = atLevel(WeightStore.open(dir), o.level);
  const { numLayers, vocabSize } = checkpoint.config;
  if (o.ranks === 1) {
    const e = await executor(checkpoint, weights, wholeModel(numLayers));
    return {
      run: (seqs, tokens) => e.run(seqs, { tokens }),
      close: () => e.release(),
      graphBytes: e.graphBytes,
    };
  }
  const layers = { start: 0, end: numLayers };
  const ranks = await Promise.all(
    [0, 1].map((rank) => executor(checkpoint, weights, { layers, tensor: { rank, size: 2 } })),
  );
  return {
    run: async (seqs, tokens) => {
      const reduce = localGroup(2);
      const outs = await Promise.all(ranks.map((e, rank) => e.run(seqs, { tokens }, reduce[rank]!)));
      return joinVocabSlices(outs, vocabSize);
    },
    close: async () => {
      for (const e of ranks) await e.release();
    },
    graphBytes: ranks.reduce((n, e) => n + e.graphBytes, 0),
  };
}

const VOCAB = 512;

/**
 * Two sequences, a prefill then 5 greedy decode steps (fed the reference's choices): the largest logit
 * difference relative to the reference's largest |logit|, and the steps whose greedy ids differ.
 */
async function compare(got: Model, reference: Model): Promise<{ relative: number; mismatches: number }> {
  const a = [5, 17, 33, 41, 2, 9, 100, 250, 7, 3];
  const b = [11, 12, 13, 14, 15, 16, 17];
  let seqs: SequenceStep[] = [
    { numPast: 0, numNew: a.length, blockTable: [3, 0, 7, 9, 12], needsLogits: true },
    { numPast: 0, numNew: b.length, blockTable: [1, 2, 4, 5, 6], needsLogits: true },
  ];
  let tokens = Int32Array.from([...a, ...b]);
  let relative = 0;
  let mismatches = 0;
  for (let step = 0; step < 6; step++) {
    const expected = await reference(seqs, tokens);
    const logits = await got(seqs, tokens);
    assert.equal(logits.length, expected.length);
    const scale = expected.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    for (let i = 0; i < logits.length; i++)
      relative = Math.max(relative, Math.abs(logits[i]! - expected[i]!) / scale);
    const ids = argmaxRows(expected, VOCAB);
    if (argmaxRows(logits, VOCAB).join() !== ids.join()) mismatches++;
    tokens = Int32Array.from(ids);
    seqs = seqs.map((s) => ({ ...s, numPast: s.numPast + s.numNew, numNew: 1 }));
  }
  return { relative, mismatches };
}

const CASES = [
  { packed: "gptq", float: "dequantized" },
  { packed: "awq", float: "dequantized" },
  { packed: "gptq-act-order", float: "dequantized-act-order" },
];

describe("pre-quantized GPTQ/AWQ checkpoints against their dequantized float weights", () => {
  for (const { packed, float } of CASES) {
    it(`${packed}: the float checkpoint's logits (1e-3) and greedy ids, MatMulNBits in float32`, async () => {
      const reference = await load(float, { level: 0, ranks: 1 });
      const model = await load(packed, { level: 0, ranks: 1 });
      const { relative, mismatches } = await compare(model.run, reference.run);
      await model.close();
      await reference.close();
      assert.ok(relative <= 1e-3, `largest logit difference ${relative} of the largest logit`);
      assert.equal(mismatches, 0, "greedy ids differ");
    });
  }

  for (const packed of ["gptq", "awq"])
    it(`${packed} over two tensor-parallel ranks: the whole float model's logits and greedy ids`, async () => {
      const reference = await load("dequantized", { level: 0, ranks: 1 });
      const model = await load(packed, { level: 0, ranks: 2 });
      const { relative, mismatches } = await compare(model.run, reference.run);
      await model.close();
      await reference.close();
      assert.ok(relative <= 1e-3, `largest logit difference ${relative} of the largest logit`);
      assert.equal(mismatches, 0, "greedy ids differ");
    });

  it("act-order GPTQ over row-parallel ranks is refused, naming desc_act", async () => {
    await assert.rejects(load("gptq-act-order", { level: 0, ranks: 2 }), /desc_act/);
  });

  it("refuses --quantization on a checkpoint that is already quantized, naming the flag", () => {
    for (const packed of ["gptq", "awq"])
      assert.throws(
        () =>
          WeightStore.open(path.join(DIR, packed), {
            quantization: { bits: 4, blockSize: 32, symmetric: true },
          }),
        /--quantization.*already quantized/,
      );
  });

  it("keeps the packed matrices packed: the graph holds ~0.64 bytes per projection weight, not 4", async () => {
    const float = await load("dequantized", { level: 0, ranks: 1 });
    const packed = await load("gptq", { level: 0, ranks: 1 });
    await float.close();
    await packed.close();
    const projections = describeCheckpoint(path.join(DIR, "dequantized"));
    const {
      hiddenSize: h,
      intermediateSize: I,
      numHeads,
      numKvHeads,
      headDim,
      numLayers,
    } = projections.config;
    const weights = numLayers * (h * numHeads * headDim * 2 + 2 * h * numKvHeads * headDim + 3 * h * I);
    // codes 0.5 B, a float32 scale and a 4-bit zero point per 32 weights: 0.64 B per weight.
    const expected = float.graphBytes - 4 * weights + 0.64 * weights;
    console.log(
      `graph bytes: float ${float.graphBytes}, gptq ${packed.graphBytes}, expected ${Math.round(expected)}`,
    );
    assert.ok(Math.abs(packed.graphBytes - expected) <= 0.02 * float.graphBytes);
  });

  it("through ModelRunner at the default int8-activation level: logits stay close to the float model's", async () => {
    const start = (model: string) =>
      ModelRunner.start({
        modelDir: path.join(DIR, model),
        architectureOverride: undefined,
        threads: 1,
        numBlocks: 16,
        blockSize: 16,
        attention: "onnx-ops",
      });
    const table = Array.from({ length: 16 }, (_, i) => i);
    const prompt = Int32Array.of(5, 17, 33, 41, 2, 9, 100, 250);
    const run = async (runner: ModelRunner) =>
      (
        await runner.step(prompt, [
          { numPast: 0, numNew: prompt.length, blockTable: table, needsLogits: true },
        ])
      ).logits;
    const reference = await start("dequantized");
    const expected = await run(reference);
    await reference.close();
    for (const model of ["gptq", "awq"]) {
      const runner = await start(model);
      const logits = await run(runner);
      await runner.close();
      const range = Math.max(...expected) - Math.min(...expected);
      const worst = logits.reduce((m, x, i) => Math.max(m, Math.abs(x - expected[i]!)), 0) / range;
      console.log(`${model} at accuracy_level 4: max |diff| ${(worst * 100).toFixed(2)}% of the logit range`);
      // int8 activations per block: ~1% measured; a wrong layout gives differences of the range's size.
      assert.ok(worst < 0.1, `max diff ${worst} of the range`);
    }
  });
});

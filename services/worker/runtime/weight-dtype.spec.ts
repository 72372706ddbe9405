// A 16-bit checkpoint stays 16-bit in memory: the initializers onnxruntime keeps once it has optimized
// a shard's graphs (what it saves with optimizedModelFilePath, under the executor's own session
// options) hold the checkpoint's matrices in their stored dtype, with float32 left only for vectors
// (norm weights, biases) and small constants. A tensor-parallel rank keeps only its slices.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import * as ort from "onnxruntime-node";
import { type CheckpointDtype, createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import type { Arch } from "../../../devtools/model-factory/presets.ts";
import { TensorProto_DataType as DataType, ModelProtoSchema } from "../../../proto/gen/onnx/onnx_pb.js";
import { onnxOpsAttention } from "../graph/attention-onnx-ops.ts";
import { buildSegmentGraph, planSegments, type ShardSpec, wholeModel } from "../graph/shard-graph.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { sessionOptions } from "./shard-executor.ts";

type BytesByType = Map<DataType, number>;

/** Initializer bytes by data type of the graphs onnxruntime runs for a shard, summed over its segments. */
async function keptInitializers(
  dir: string,
  spec: ShardSpec,
  scratch: string,
  widen = false,
): Promise<BytesByType> {
  const { config, architecture } = describeCheckpoint(dir);
  const parts = {
    config,
    names: architecture.weightNames(config),
    weights: WeightStore.open(dir, { widen }),
    attention: onnxOpsAttention,
    spec,
  };
  const bytes: BytesByType = new Map();
  for (const segment of planSegments(spec, config.numLayers)) {
    const optimized = path.join(scratch, "optimized.onnx");
    const options = sessionOptions({ blockSize: 16, threads: 1, alone: spec.tensor.size === 1 });
    const session = await ort.InferenceSession.create(buildSegmentGraph(parts, segment), {
      ...options,
      optimizedModelFilePath: optimized,
    });
    await session.release();
    const graph = fromBinary(ModelProtoSchema, fs.readFileSync(optimized)).graph!;
    for (const t of graph.initializer)
      bytes.set(t.dataType, (bytes.get(t.dataType) ?? 0) + t.rawData.byteLength);
  }
  return bytes;
}

/** Bytes of the checkpoint's matrices (2-D tensors) and of its vectors widened to float32. */
function checkpointBytes(dir: string): { matrices: number; vectorsAsF32: number; embed: number } {
  const store = WeightStore.open(dir);
  let matrices = 0;
  let vectorsAsF32 = 0;
  let embed = 0;
  for (const name of store.names()) {
    const shape = store.shape(name);
    const elements = shape.reduce((a, b) => a * b, 1);
    if (shape.length === 2) matrices += elements * 2;
    else vectorsAsF32 += elements * 4;
    if (name === "model.embed_tokens.weight") embed = elements * 2;
  }
  return { matrices, vectorsAsF32, embed };
}

const HALF: Record<Exclude<CheckpointDtype, "float32">, DataType> = {
  float16: DataType.FLOAT16,
  bfloat16: DataType.BFLOAT16,
};

describe("weights a 16-bit checkpoint keeps in memory", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-weight-dtype-"));
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  const make = async (arch: Arch, dtype: CheckpointDtype) => {
    const out = path.join(root, `${arch}-${dtype}`);
    if (!fs.existsSync(out)) await createCheckpoint({ arch, preset: "tiny", seed: 5, out, dtype });
    return out;
  };

  for (const [arch, dtype] of [
    ["llama", "bfloat16"],
    ["qwen2", "float16"],
    ["mixtral", "bfloat16"],
  ] as const) {
    it(`${arch} ${dtype}: every matrix stays ${dtype} in the session of a single process`, async () => {
      const dir = await make(arch, dtype);
      const { config } = describeCheckpoint(dir);
      const kept = await keptInitializers(dir, wholeModel(config.numLayers), root);
      const { matrices, vectorsAsF32 } = checkpointBytes(dir);
      assert.equal(kept.get(HALF[dtype]), matrices, "16-bit bytes kept");
      // float32: the vectors, the rope table and a few scalars, nothing the size of a matrix.
      const f32 = kept.get(DataType.FLOAT) ?? 0;
      assert.ok(f32 <= vectorsAsF32 + 4096, `${f32} float32 bytes kept, vectors are ${vectorsAsF32}`);
    });
  }

  it("llama bfloat16 under tensor parallelism: each rank keeps its slices, 16-bit", async () => {
    const dir = await make("llama", "bfloat16");
    const { config } = describeCheckpoint(dir);
    const whole = await keptInitializers(dir, wholeModel(config.numLayers), root);
    const ranks: BytesByType[] = [];
    for (const rank of [0, 1]) {
      const spec = { layers: { start: 0, end: config.numLayers }, tensor: { rank, size: 2 } };
      ranks.push(await keptInitializers(dir, spec, root));
    }
    const half = (b: BytesByType) => b.get(DataType.BFLOAT16) ?? 0;
    // Every matrix is split between the ranks except the embedding table, which both hold whole.
    assert.equal(half(ranks[0]!) + half(ranks[1]!), half(whole) + checkpointBytes(dir).embed);
    for (const r of ranks) assert.ok((r.get(DataType.FLOAT) ?? 0) < 0.05 * half(r), "float32 kept by a rank");
  });

  it("float32 checkpoints keep float32", async () => {
    const dir = await make("llama", "float32");
    const { config } = describeCheckpoint(dir);
    const kept = await keptInitializers(dir, wholeModel(config.numLayers), root);
    assert.equal(kept.get(DataType.FLOAT16), undefined);
    assert.equal(kept.get(DataType.BFLOAT16), undefined);
    assert.ok((kept.get(DataType.FLOAT) ?? 0) >= checkpointBytes(dir).matrices * 2);
  });

  it("bfloat16 served as float32 (--dtype float32): the matrices are widened at load, nothing stays 16-bit", async () => {
    const dir = await make("llama", "bfloat16");
    const { config } = describeCheckpoint(dir);
    const kept = await keptInitializers(dir, wholeModel(config.numLayers), root, true);
    assert.equal(kept.get(DataType.BFLOAT16), undefined);
    assert.ok((kept.get(DataType.FLOAT) ?? 0) >= checkpointBytes(dir).matrices * 2);
    // Widening is exact: the widened store reads the same values as the float32 reader.
    const store = WeightStore.open(dir, { widen: true });
    const name = "model.layers.0.self_attn.q_proj.weight";
    const stored = store.readStored(name, store.shape(name));
    assert.equal(stored.dtype, "F32");
    assert.deepEqual(
      new Float32Array(stored.bytes.buffer, stored.bytes.byteOffset, stored.bytes.byteLength / 4),
      store.read(name).data,
    );
  });
});

// One onnxruntime session of the decoder graph plus the KV pool it reads: runs a step and writes the
// new tokens' K/V into their pool slots.
import * as ort from "onnxruntime-node";
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { AttentionBackend, AttentionBackendName } from "../graph/attention-backend.ts";
import { GQA_SEQLENS, GQA_TOTAL_LENGTH } from "../graph/attention-ms-gqa.ts";
import {
  ATTENTION_GROUPS,
  buildDecoderGraph,
  keyCacheName,
  newKeyName,
  newValueName,
  valueCacheName,
  type WeightSource,
} from "../graph/decoder-graph.ts";
import type { Checkpoint } from "../model/checkpoint.ts";
import { buildStepInputs, type SequenceStep } from "./step-inputs.ts";

export interface KvPool {
  keys: Float32Array[];
  values: Float32Array[];
}

export function allocateKvPool(config: DecoderConfig, numBlocks: number, blockSize: number): KvPool {
  const size = numBlocks * blockSize * config.numKvHeads * config.headDim;
  const layers = () => Array.from({ length: config.numLayers }, () => new Float32Array(size));
  return { keys: layers(), values: layers() };
}

export class StepExecutor {
  readonly attention: AttentionBackendName;
  readonly graphBytes: number;
  private readonly config: DecoderConfig;
  private readonly session: ort.InferenceSession;
  private readonly pool: KvPool;
  private readonly blockSize: number;
  private readonly slots: number;

  private constructor(
    config: DecoderConfig,
    session: ort.InferenceSession,
    attention: AttentionBackendName,
    graphBytes: number,
    pool: KvPool,
    blockSize: number,
  ) {
    this.config = config;
    this.session = session;
    this.attention = attention;
    this.graphBytes = graphBytes;
    this.pool = pool;
    this.blockSize = blockSize;
    this.slots = pool.keys[0]!.length / (config.numKvHeads * config.headDim);
  }

  static async create(
    checkpoint: Checkpoint,
    weights: WeightSource,
    attention: AttentionBackend,
    pool: KvPool,
    blockSize: number,
    threads: number,
  ): Promise<StepExecutor> {
    const { config } = checkpoint;
    const graph = buildDecoderGraph(config, checkpoint.architecture.weightNames(config), weights, attention);
    // Warnings (e.g. about the unused present K/V of GroupQueryAttention) would flood stderr per step.
    const options: ort.InferenceSession.SessionOptions = {
      graphOptimizationLevel: "all",
      logSeverityLevel: 3,
    };
    if (threads > 0) options.intraOpNumThreads = threads;
    const session = await ort.InferenceSession.create(graph, options);
    return new StepExecutor(config, session, attention.name, graph.byteLength, pool, blockSize);
  }

  /** Runs one step; returns the logits of the sequences that asked for them, row after row. */
  async run(tokens: Int32Array, seqs: readonly SequenceStep[]): Promise<Float32Array> {
    const c = this.config;
    const inputs = buildStepInputs(seqs, this.blockSize, c.slidingWindow);
    const n = tokens.length;
    if (n !== inputs.positions.length)
      throw new Error(`step has ${n} tokens but its sequences add up to ${inputs.positions.length}`);
    const i64 = (data: BigInt64Array, dims: number[]) => new ort.Tensor("int64", data, dims);
    const feeds: Record<string, ort.Tensor> = {
      input_ids: i64(BigInt64Array.from(tokens, BigInt), [n]),
      position_ids: i64(inputs.positions, [n]),
      unpad_index: i64(inputs.unpadIndex, [n]),
      logits_index: i64(inputs.logitsIndex, [inputs.logitsIndex.length]),
    };
    for (const group of ATTENTION_GROUPS) {
      const t = inputs.groups[group];
      feeds[`${group}_query_index`] = i64(t.queryIndex, [t.batch, t.queries]);
      feeds[`${group}_past_index`] = i64(t.pastIndex, [t.batch, t.past]);
      feeds[`${group}_bias`] = new ort.Tensor("float32", t.bias, [t.batch, 1, t.queries, t.past + t.queries]);
    }
    if (this.session.inputNames.includes(GQA_SEQLENS)) {
      const d = inputs.groups.decode;
      const seqlens = Int32Array.from(d.numPast);
      feeds[GQA_SEQLENS] = new ort.Tensor("int32", seqlens, [d.batch]);
      feeds[GQA_TOTAL_LENGTH] = new ort.Tensor("int32", Int32Array.of(d.past + 1), [1]);
    }
    const kvDims = [this.slots, c.numKvHeads, c.headDim];
    for (let l = 0; l < c.numLayers; l++) {
      feeds[keyCacheName(l)] = new ort.Tensor("float32", this.pool.keys[l]!, kvDims);
      feeds[valueCacheName(l)] = new ort.Tensor("float32", this.pool.values[l]!, kvDims);
    }
    const out = await this.session.run(feeds);
    const width = c.numKvHeads * c.headDim;
    for (let l = 0; l < c.numLayers; l++) {
      writeSlots(this.pool.keys[l]!, out[newKeyName(l)]!.data as Float32Array, inputs.newSlots, width);
      writeSlots(this.pool.values[l]!, out[newValueName(l)]!.data as Float32Array, inputs.newSlots, width);
    }
    return (out["logits"]!.data as Float32Array).slice();
  }

  /** Floats of one block across all layers, keys and values: layers × 2 × blockSize × kvHeads × headDim. */
  get blockFloats(): number {
    return this.config.numLayers * 2 * this.blockSize * this.config.numKvHeads * this.config.headDim;
  }

  /** Copies blocks out of the pool, block after block, each [layer][key|value][token][kvHead][dim]. */
  exportBlocks(blocks: readonly number[]): Float32Array {
    const out = new Float32Array(blocks.length * this.blockFloats);
    const span = this.blockSize * this.config.numKvHeads * this.config.headDim;
    let at = 0;
    for (const b of blocks) {
      this.checkBlock(b);
      for (let l = 0; l < this.config.numLayers; l++) {
        out.set(this.pool.keys[l]!.subarray(b * span, (b + 1) * span), at);
        out.set(this.pool.values[l]!.subarray(b * span, (b + 1) * span), at + span);
        at += 2 * span;
      }
    }
    return out;
  }

  /** Writes blocks laid out as exportBlocks returns them into the pool. */
  importBlocks(blocks: readonly number[], data: Float32Array): void {
    if (data.length !== blocks.length * this.blockFloats) {
      throw new Error(
        `import of ${blocks.length} blocks needs ${blocks.length * this.blockFloats} floats, got ${data.length}`,
      );
    }
    const span = this.blockSize * this.config.numKvHeads * this.config.headDim;
    let at = 0;
    for (const b of blocks) {
      this.checkBlock(b);
      for (let l = 0; l < this.config.numLayers; l++) {
        this.pool.keys[l]!.set(data.subarray(at, at + span), b * span);
        this.pool.values[l]!.set(data.subarray(at + span, at + 2 * span), b * span);
        at += 2 * span;
      }
    }
  }

  private checkBlock(b: number): void {
    if (!Number.isInteger(b) || b < 0 || (b + 1) * this.blockSize > this.slots)
      throw new Error(`no block ${b} in the pool`);
  }

  release(): Promise<void> {
    return this.session.release();
  }
}

function writeSlots(pool: Float32Array, values: Float32Array, slots: Int32Array, width: number): void {
  for (let t = 0; t < slots.length; t++)
    pool.set(values.subarray(t * width, (t + 1) * width), slots[t]! * width);
}

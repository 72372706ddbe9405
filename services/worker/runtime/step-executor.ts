// One onnxruntime session of the decoder graph plus the KV pool it reads: runs a step and writes the
// new tokens' K/V into their pool slots.
import * as ort from "onnxruntime-node";
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { AttentionBackend, AttentionBackendName } from "../graph/attention-backend.ts";
import { GQA_SEQLENS } from "../graph/attention-ms-gqa.ts";
import {
  buildDecoderGraph,
  keyCacheName,
  newKeyName,
  newValueName,
  valueCacheName,
  type WeightSource,
} from "../graph/decoder-graph.ts";
import type { Checkpoint } from "../model/checkpoint.ts";
import { exportPoolBlocks, importPoolBlocks, type KvPool, writeSlots } from "./kv-pool.ts";
import { stepFeeds, tokenFeed } from "./step-feeds.ts";
import { buildStepInputs, type SequenceStep } from "./step-inputs.ts";

export { allocateKvPool, type KvPool } from "./kv-pool.ts";

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
    const feeds = stepFeeds(inputs, this.session.inputNames.includes(GQA_SEQLENS));
    feeds["input_ids"] = tokenFeed(tokens);
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
    for (const b of blocks) this.checkBlock(b);
    return exportPoolBlocks(this.pool, blocks, this.blockSize * this.config.numKvHeads * this.config.headDim);
  }

  /** Writes blocks laid out as exportBlocks returns them into the pool. */
  importBlocks(blocks: readonly number[], data: Float32Array): void {
    if (data.length !== blocks.length * this.blockFloats) {
      throw new Error(
        `import of ${blocks.length} blocks needs ${blocks.length * this.blockFloats} floats, got ${data.length}`,
      );
    }
    for (const b of blocks) this.checkBlock(b);
    importPoolBlocks(this.pool, blocks, data, this.blockSize * this.config.numKvHeads * this.config.headDim);
  }

  private checkBlock(b: number): void {
    if (!Number.isInteger(b) || b < 0 || (b + 1) * this.blockSize > this.slots)
      throw new Error(`no block ${b} in the pool`);
  }

  release(): Promise<void> {
    return this.session.release();
  }
}

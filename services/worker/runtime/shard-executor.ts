// The one executor of the model, in every process: the sessions of a shard (graph/shard-graph.ts: one per
// segment) and the KV pool of its layers and KV heads. A single process is the one member of a group of
// one, whose shard is the whole model: one session of the whole-model graph over the whole pool. A step
// runs the segments in order; between two segments of a tensor shard, the partial sum goes to `reduce`
// (the all-reduce over the rank's group) and the sum comes back. It also copies whole blocks of its
// pool out and in (KV export and import), checking the block ids.
import * as ort from "onnxruntime-node";
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { AttentionBackend, AttentionBackendName } from "../graph/attention-backend.ts";
import { GQA_SEQLENS } from "../graph/attention-ms-gqa.ts";
import { SHARED_INDEX } from "../graph/attention-shared-prefix.ts";
import { shardRanges } from "../graph/decoder-ops.ts";
import {
  keyCacheName,
  newKeyName,
  newValueName,
  valueCacheName,
  type WeightSource,
} from "../graph/graph-names.ts";
import {
  buildSegmentGraph,
  planSegments,
  SEGMENT_IO,
  type Segment,
  type ShardSpec,
  segmentAttentionLayers,
} from "../graph/shard-graph.ts";
import type { Checkpoint } from "../model/checkpoint.ts";
import { allocateKvPool, exportPoolBlocks, importPoolBlocks, type KvPool, writeSlots } from "./kv-pool.ts";

export type { KvPool } from "./kv-pool.ts";

import { stepFeeds, tokenFeed } from "./step-feeds.ts";
import { buildStepInputs, type SequenceStep } from "./step-inputs.ts";

/** What a step starts from: token ids (the first stage) or the previous stage's hidden states. */
export type ShardEntry = { tokens: Int32Array } | { hidden: Float32Array };

/** Completes segment `segment`'s partial sum [N, hidden] across the tensor group. */
export type Reduce = (segment: number, partial: Float32Array) => Promise<Float32Array>;

/** The reduce of a shard without tensor parallelism: it has no partial sums, so it is never called. */
const NO_REDUCE: Reduce = () => Promise.reject(new Error("a shard without tensor ranks has no all-reduce"));

export interface ExecutorOptions {
  blockSize: number;
  /** onnxruntime intra-op threads; 0 = onnxruntime's default (all cores). */
  threads: number;
  /**
   * The only member of its group (a single process): nothing of its waits on a peer, so its session
   * keeps onnxruntime's spinning threads and runs need not take turns with link writes (runInTurn).
   */
  alone: boolean;
  /** Cut at the all-reduce points even without tensor parallelism (to measure what the cuts cost). */
  cut?: boolean;
}

/** The KV pool of a shard: its layers, its rank's KV heads, `numBlocks` blocks of `blockSize` tokens. */
export function allocateShardPool(
  config: DecoderConfig,
  spec: ShardSpec,
  numBlocks: number,
  blockSize: number,
): KvPool {
  const { kvHeads } = shardRanges(config, spec.tensor);
  const layers = spec.layers.end - spec.layers.start;
  return allocateKvPool(
    { numLayers: layers, numKvHeads: kvHeads, headDim: config.headDim },
    numBlocks,
    blockSize,
  );
}

/**
 * The options of every session of a shard. The same for every weight dtype: a 16-bit checkpoint's
 * graph keeps its matrices 16-bit under full optimization (graph/graph-weights.ts).
 */
export function sessionOptions(o: ExecutorOptions): ort.InferenceSession.SessionOptions {
  // Warnings (e.g. about the unused present K/V of GroupQueryAttention) would flood stderr per step.
  // onnxruntime's CPU arena stays on (issue 18): it keeps the regions of the largest steps so far, grown
  // by powers of two as batch and sequence shapes vary (about 150 MiB on the base preset after 2 rounds
  // of 64 concurrent streams), but without it every step's activations are mapped and faulted in anew:
  // a 64-sequence decode step took 114 -> 153 ms of CPU, and `tessera serve` rounds ran ~3x longer.
  // Nor can a run give the arena's free regions back: onnxruntime's run option for that
  // (memory.enable_memory_arena_shrinkage) cannot be set from onnxruntime-node 1.30, whose native
  // ParseRunOptions reads only logSeverityLevel and tag (its `extra` is WebAssembly's). Measured: a run
  // whose activations took 1 GiB, then a small one, left 1169 MiB resident with the option and without.
  // Memory patterns stay off: a step's shapes change with nearly every step (the decode group's longest
  // past grows by one token), so each step planned and cached a pattern of its own and took one block
  // of its peak size from the arena, whose regions grew by powers of two to fit the largest. On the
  // base preset after 10 rounds of 64 streams (bench engine, f) `tessera serve` held 1.68x of weights +
  // KV pool with them, still growing 8.6% over the last 5 rounds, and 1.50x without, flat within 0.6%.
  // Cost: 5-7% more CPU per decode step where a step's shapes repeat (bare executor, 1 thread).
  const options: ort.InferenceSession.SessionOptions = {
    graphOptimizationLevel: "all",
    enableMemPattern: false,
    logSeverityLevel: 3,
  };
  // A member of a larger group does not spin: between two runs it waits on its peers (an all-reduce,
  // the previous stage), and the spinning intra-op threads of its several sessions, and of the members
  // sharing its machine, would hold the cores the running session needs.
  if (!o.alone)
    options.extra = { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } };
  if (o.threads > 0) options.intraOpNumThreads = o.threads;
  return options;
}

interface LoadedSegment {
  segment: Segment;
  session: ort.InferenceSession;
  attends: number[];
}

export class ShardExecutor {
  readonly attention: AttentionBackendName;
  readonly graphBytes: number;
  readonly spec: ShardSpec;
  private readonly config: DecoderConfig;
  private readonly segments: LoadedSegment[];
  private readonly pool: KvPool;
  private readonly blockSize: number;
  private readonly kvHeads: number;
  private readonly slots: number;
  /** Whether a segment takes GroupQueryAttention's sequence lengths. */
  private readonly gqa: boolean;
  /** Whether a segment attends to decode rows' shared prompt heads once (attention-shared-prefix.ts). */
  private readonly sharedPrefix: boolean;
  /** Runs take turns with the event loop's link writes (see runInTurn); not in a group of one. */
  private readonly turns: boolean;
  /** The last session run queued on this thread. */
  private lastRun: Promise<unknown> = Promise.resolve();

  private constructor(
    parts: Pick<ShardExecutor, "attention" | "graphBytes" | "spec"> & {
      config: DecoderConfig;
      segments: LoadedSegment[];
      pool: KvPool;
      blockSize: number;
      turns: boolean;
    },
  ) {
    this.attention = parts.attention;
    this.graphBytes = parts.graphBytes;
    this.spec = parts.spec;
    this.config = parts.config;
    this.segments = parts.segments;
    this.pool = parts.pool;
    this.blockSize = parts.blockSize;
    this.turns = parts.turns;
    this.kvHeads = shardRanges(parts.config, parts.spec.tensor).kvHeads;
    this.slots = (this.pool.keys[0]?.length ?? 0) / (this.kvHeads * parts.config.headDim);
    this.gqa = this.segments.some((s) => s.session.inputNames.includes(GQA_SEQLENS));
    this.sharedPrefix = this.segments.some((s) => s.session.inputNames.includes(SHARED_INDEX));
  }

  /** Builds the shard's sessions over `pool` (allocateShardPool; the caller may share it between tries). */
  static async create(
    checkpoint: Checkpoint,
    weights: WeightSource,
    attention: AttentionBackend,
    spec: ShardSpec,
    pool: KvPool,
    o: ExecutorOptions,
  ): Promise<ShardExecutor> {
    const { config } = checkpoint;
    if (pool.keys.length !== spec.layers.end - spec.layers.start)
      throw new Error(`a pool of ${pool.keys.length} layers does not fit the shard's layers`);
    const parts = { config, names: checkpoint.architecture.weightNames(config), weights, attention, spec };
    const options = sessionOptions(o);
    const segments: LoadedSegment[] = [];
    let graphBytes = 0;
    try {
      for (const segment of planSegments(spec, config.numLayers, o.cut)) {
        const graph = buildSegmentGraph(parts, segment);
        graphBytes += graph.byteLength;
        const session = await ort.InferenceSession.create(graph, options);
        segments.push({ segment, session, attends: segmentAttentionLayers(segment) });
      }
    } catch (err) {
      for (const s of segments) await s.session.release();
      throw err;
    }
    return new ShardExecutor({
      attention: attention.name,
      graphBytes,
      spec,
      config,
      segments,
      pool,
      blockSize: o.blockSize,
      turns: !o.alone,
    });
  }

  /** Segments a step runs (and all-reduces between them: one fewer). */
  get numSegments(): number {
    return this.segments.length;
  }

  /**
   * Runs one step of the shard: its hidden states [N, hidden], or its logits slice [L, V/ranks] on the
   * last stage (whole rows [L, V] for the whole model). `reduce` is needed with tensor ranks only.
   */
  async run(seqs: readonly SequenceStep[], entry: ShardEntry, reduce = NO_REDUCE): Promise<Float32Array> {
    const c = this.config;
    const inputs = buildStepInputs(seqs, this.blockSize, c, this.sharedPrefix);
    const n = inputs.positions.length;
    const feeds = stepFeeds(inputs, this.gqa);
    const hiddenDims = [n, c.hiddenSize];
    if ("tokens" in entry) {
      if (entry.tokens.length !== n)
        throw new Error(`step has ${entry.tokens.length} tokens but its sequences add up to ${n}`);
      feeds[SEGMENT_IO.tokens] = tokenFeed(entry.tokens);
    } else {
      if (entry.hidden.length !== n * c.hiddenSize)
        throw new Error(`hidden states of ${entry.hidden.length} floats do not fit ${n} tokens`);
      feeds[SEGMENT_IO.hidden] = new ort.Tensor("float32", entry.hidden, hiddenDims);
    }
    const kvDims = [this.slots, this.kvHeads, c.headDim];
    const width = this.kvHeads * c.headDim;
    let result: Float32Array | undefined;
    for (const [k, { segment, session, attends }] of this.segments.entries()) {
      for (const layer of attends) {
        const local = layer - this.spec.layers.start;
        feeds[keyCacheName(layer)] = new ort.Tensor("float32", this.pool.keys[local]!, kvDims);
        feeds[valueCacheName(layer)] = new ort.Tensor("float32", this.pool.values[local]!, kvDims);
      }
      const wanted: Record<string, ort.Tensor> = {};
      for (const name of session.inputNames) wanted[name] = feeds[name]!;
      const out = await this.runInTurn(session, wanted);
      for (const layer of attends) {
        const local = layer - this.spec.layers.start;
        writeSlots(
          this.pool.keys[local]!,
          out[newKeyName(layer)]!.data as Float32Array,
          inputs.newSlots,
          width,
        );
        writeSlots(
          this.pool.values[local]!,
          out[newValueName(layer)]!.data as Float32Array,
          inputs.newSlots,
          width,
        );
      }
      if (segment.exit === "partial") {
        const reduced = await reduce(k, out[SEGMENT_IO.partial]!.data as Float32Array);
        feeds[SEGMENT_IO.residual] = out[SEGMENT_IO.residualOut]!;
        feeds[SEGMENT_IO.reduced] = new ort.Tensor("float32", reduced, hiddenDims);
      } else {
        result = out[segment.exit === "logits" ? SEGMENT_IO.logits : SEGMENT_IO.hiddenOut]!
          .data as Float32Array;
      }
    }
    // Each output comes in an ArrayBuffer of its own, so it is handed on without a copy.
    return result!;
  }

  /**
   * Runs a session once the runs queued before it are done and, in a group, one event-loop turn after
   * the last.
   * onnxruntime-node runs a session in an immediate, holding the thread; two runs queued at once run
   * back to back in one turn. What the first handed on (hidden states to the next stage, an all-reduce
   * part, logits) is written to its HTTP/2 stream, but Node sends HTTP/2 frames from an immediate of
   * the next turn, so without this the peer would get them only after the second run: with two
   * batches in flight (virtual engines, micro-batches), every hand-off would wait a whole run.
   */
  private runInTurn(session: ort.InferenceSession, feeds: Record<string, ort.Tensor>) {
    const turn = this.turns ? this.lastRun.then(nextLoopTurn) : this.lastRun;
    const run = turn.then(() => session.run(feeds));
    this.lastRun = run.catch(() => {});
    return run;
  }

  /** Floats of one block in this shard's pool: its layers × 2 × blockSize × its KV heads × headDim. */
  get blockFloats(): number {
    return this.pool.keys.length * 2 * this.span;
  }

  private get span(): number {
    return this.blockSize * this.kvHeads * this.config.headDim;
  }

  /** The shard's part of blocks: [block][its layer][key|value][token][its KV head][dim]. */
  exportBlocks(blocks: readonly number[]): Float32Array {
    for (const b of blocks) this.checkBlock(b);
    return exportPoolBlocks(this.pool, blocks, this.span);
  }

  importBlocks(blocks: readonly number[], data: Float32Array): void {
    if (data.length !== blocks.length * this.blockFloats)
      throw new Error(
        `import of ${blocks.length} blocks needs ${blocks.length * this.blockFloats} floats, got ${data.length}`,
      );
    for (const b of blocks) this.checkBlock(b);
    importPoolBlocks(this.pool, blocks, data, this.span);
  }

  private checkBlock(b: number): void {
    if (!Number.isInteger(b) || b < 0 || (b + 1) * this.blockSize > this.slots)
      throw new Error(`no block ${b} in the pool`);
  }

  async release(): Promise<void> {
    for (const s of this.segments) await s.session.release();
  }
}

/** Resolves in the check phase of the event loop's next turn (after the I/O of this one). */
function nextLoopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

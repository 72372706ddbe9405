// The event loop's handle on the model: `step` sends one scheduled batch (token ids and the sequences'
// block tables) and resolves with the logits rows it asked for, or with the rows the runner sampled.
// ModelRunner is the interface the engine drives. There is one runtime behind it, as in nano-vllm's
// `ModelRunner(config, rank)`: a single process is a parallel group of one (1 pipeline stage, tensor
// size 1) and runs the same code as every group, ShardedRunner over its model thread
// (services/worker/parallel/README.md), with no links, no gRPC and no all-reduce. ModelRunner.start
// starts that group of one; rank 0 of a larger replica starts ShardedRunner with its placement.

import type { GeneratedToken } from "../../inference/types.ts";
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { QuantOptions } from "../model/quantize-blocks.ts";
import { singleProcess } from "../parallel/shard-placement.ts";
import { ShardedRunner } from "../parallel/sharded-runner.ts";
import type { SequenceStep } from "./step-inputs.ts";

/** What every runner is started with: the checkpoint and the KV pool (the engine's configuration). */
export interface ModelRunnerOptions {
  modelDir: string;
  architectureOverride: string | undefined;
  /** Keep 16-bit weights as float32 in memory (`--dtype float32`); default: as the checkpoint stores them. */
  widenWeights?: boolean;
  /** `--quantization`: projection matrices kept quantized (graph-weights-quantized.ts, graph-weights-channel.ts). */
  quantization?: QuantOptions;
  /** onnxruntime intra-op threads; 0 = onnxruntime's default (all cores). */
  threads: number;
  /** KV pool size in blocks of `blockSize` tokens (the same in every member: block ids are the replica's). */
  numBlocks: number;
  blockSize: number;
  /** A group of one times the available backends at load and keeps the fastest; a larger group takes onnx-ops. */
  attention: AttentionBackendName | "auto";
}

/** A row sampled by the runner: its token, or why it could not be sampled (that request fails alone). */
export type SampledRow = GeneratedToken | { error: string };

export interface StepResult {
  /** Logits rows of the sequences with needsLogits, in order, each vocabSize long (empty with `tokens`). */
  logits: Float32Array;
  /**
   * From a runner that samples (`samplesRows`), when every needsLogits sequence carried its
   * `sampling`: the sampled rows, in order, in place of the logits.
   */
  tokens?: SampledRow[];
  /** Time the model thread spent in the step. */
  runMs: number;
}

export interface ModelRunner {
  readonly loadMs: number;
  readonly attention: AttentionBackendName;
  /** Milliseconds per timed step of each backend tried (empty when forced or not raced). */
  readonly attentionTimings: Partial<Record<AttentionBackendName, number>>;
  /** Backends that failed to build, run or agree, with the reason. */
  readonly attentionRejected: Partial<Record<AttentionBackendName, string>>;
  /**
   * Bytes of rank 0's ONNX graphs, nearly all of them its weights (initializers): the whole model's in a
   * single process, rank 0's shard's in a group. What `--quantization` shrinks; logged at start-up.
   */
  readonly graphBytes?: number;
  /**
   * Whether the runner samples where the logits are (the model thread of the last stage): the engine
   * then gives each needsLogits sequence its `sampling` and reads `tokens` instead of logits.
   */
  readonly samplesRows?: boolean;
  /** Runs one step: `tokens` are the new tokens of `seqs`, sequence after sequence. */
  step(tokens: Int32Array, seqs: SequenceStep[]): Promise<StepResult>;
  /** The K/V of `blocks` (all layers): [block][layer][key|value][blockSize][kvHeads][headDim]. */
  exportBlocks(blocks: number[]): Promise<Float32Array>;
  /** Writes blocks in the layout exportBlocks returns into the pool. */
  importBlocks(blocks: number[], data: Float32Array): Promise<void>;
  close(): Promise<void>;
}

export const ModelRunner = {
  /** Loads the whole model in a model thread of this process: a group of one. */
  start(options: ModelRunnerOptions): Promise<ModelRunner> {
    return ShardedRunner.start({ ...options, placement: singleProcess() });
  },
};

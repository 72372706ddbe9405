// Messages between the event loop (ShardWorker) and a shard's model thread (shard-thread.ts).
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { ShardSpec } from "../graph/shard-graph.ts";
import type { SequenceStep } from "./step-inputs.ts";

export interface ShardThreadOptions {
  modelDir: string;
  architectureOverride: string | undefined;
  /** onnxruntime intra-op threads; 0 = onnxruntime's default (all cores). */
  threads: number;
  /** KV pool size in blocks of `blockSize` tokens (the same in every shard of a replica). */
  numBlocks: number;
  blockSize: number;
  /** A shard does not race the backends (its ranks would each pick alone): "auto" means onnx-ops. */
  attention: AttentionBackendName | "auto";
  spec: ShardSpec;
}

export interface ShardThreadReady {
  type: "ready";
  loadMs: number;
  graphBytes: number;
  attention: AttentionBackendName;
  /** Sessions a step runs; all-reduces per step = segments - 1. */
  segments: number;
  /** Floats of one block in this shard's pool (its layers and KV heads). */
  blockFloats: number;
}

export type ToShardThread =
  /** One step (or micro-batch) of the shard: from token ids on the first stage, else from hidden states. */
  | { type: "run"; id: number; seqs: SequenceStep[]; tokens?: Int32Array; hidden?: Float32Array }
  /** The all-reduced sum of a run's segment. */
  | { type: "reduced"; id: number; segment: number; data: Float32Array }
  /** The group is gone: runs waiting for a sum fail with this message (so the thread can close). */
  | { type: "abort"; message: string }
  | { type: "export"; id: number; blocks: number[] }
  | { type: "import"; id: number; blocks: number[]; data: Float32Array }
  | { type: "close" };

export type FromShardThread =
  | ShardThreadReady
  /** A run's partial sum after `segment`, to be all-reduced across the tensor group. */
  | { type: "reduce"; id: number; segment: number; data: Float32Array }
  /** A run's result: hidden states [N, hidden], or the last stage's logits slice [L, V/ranks]. */
  | { type: "output"; id: number; data: Float32Array; runMs: number }
  | { type: "blocks"; id: number; data: Float32Array }
  | { type: "done"; id: number }
  | { type: "error"; id: number | undefined; code: number; message: string };

// Messages between the event loop (ModelRunner) and the model thread (model-thread.ts).
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { SequenceStep } from "./step-inputs.ts";

export interface ModelThreadOptions {
  modelDir: string;
  architectureOverride: string | undefined;
  /** onnxruntime intra-op threads; 0 = onnxruntime's default (all cores). */
  threads: number;
  /** KV pool size in blocks of `blockSize` tokens. */
  numBlocks: number;
  blockSize: number;
  /** "auto" times the available backends at load and keeps the fastest. */
  attention: AttentionBackendName | "auto";
}

export interface ThreadReady {
  type: "ready";
  loadMs: number;
  graphBytes: number;
  attention: AttentionBackendName;
  /** Milliseconds per timed step of each backend tried (empty when forced). */
  attentionTimings: Partial<Record<AttentionBackendName, number>>;
  /** Backends that failed to build, run or agree, with the reason. */
  attentionRejected: Partial<Record<AttentionBackendName, string>>;
}

export type ToModelThread =
  | { type: "step"; id: number; tokens: Int32Array; seqs: SequenceStep[] }
  /** Copies blocks out of the pool: [block][layer][key|value][blockSize][kvHeads][headDim]. */
  | { type: "export"; id: number; blocks: number[] }
  /** Writes blocks (same layout as export) into the pool. */
  | { type: "import"; id: number; blocks: number[]; data: Float32Array }
  | { type: "close" };

export type FromModelThread =
  | ThreadReady
  | { type: "logits"; id: number; logits: Float32Array; runMs: number }
  | { type: "blocks"; id: number; data: Float32Array }
  | { type: "done"; id: number }
  | { type: "error"; id: number | undefined; code: number; message: string };

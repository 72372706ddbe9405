// Messages between the event loop (ModelRunner) and the model thread (model-thread.ts).

export interface ModelThreadOptions {
  modelDir: string;
  architectureOverride: string | undefined;
  /** onnxruntime intra-op threads; 0 = onnxruntime's default (all cores). */
  threads: number;
}

export type ToModelThread =
  | { type: "step"; id: number; seqId: number; tokens: number[]; startPosition: number }
  | { type: "free"; seqId: number }
  | { type: "close" };

export type FromModelThread =
  | { type: "ready"; loadMs: number; graphBytes: number }
  | { type: "logits"; id: number; logits: Float32Array }
  | { type: "error"; id: number | undefined; code: number; message: string };

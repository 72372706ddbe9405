// The event loop's handle on the model: `step` sends one scheduled batch (token ids and the sequences'
// block tables) and resolves with the logits rows it asked for. ModelRunner is the interface the engine
// drives; ModelRunner.start runs the whole model in a thread of this process (runs are queued in the
// thread, one at a time), and a parallel replica's ShardedRunner (services/worker/parallel) spreads it
// over the pods of its group.
import { Worker } from "node:worker_threads";
import type { GeneratedToken } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { FromModelThread, ModelThreadOptions, ThreadReady, ToModelThread } from "./messages.ts";
import type { SequenceStep } from "./step-inputs.ts";

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

interface Pending {
  resolve(result: StepResult | Float32Array | undefined): void;
  reject(err: TesseraError): void;
}

export interface ModelRunner {
  readonly loadMs: number;
  readonly attention: AttentionBackendName;
  /** Milliseconds per timed step of each backend tried (empty when forced). */
  readonly attentionTimings: ThreadReady["attentionTimings"];
  readonly attentionRejected: ThreadReady["attentionRejected"];
  /**
   * Whether the runner samples where the logits are (a parallel replica's last stage): the engine
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
  /** Loads the whole model in a model thread of this process. */
  start(options: ModelThreadOptions): Promise<ModelRunner> {
    return ThreadModelRunner.start(options);
  },
};

class ThreadModelRunner implements ModelRunner {
  readonly loadMs: number;
  readonly attention: AttentionBackendName;
  readonly attentionTimings: ThreadReady["attentionTimings"];
  readonly attentionRejected: ThreadReady["attentionRejected"];
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: TesseraError | undefined;

  private constructor(worker: Worker, ready: ThreadReady) {
    this.worker = worker;
    this.loadMs = ready.loadMs;
    this.attention = ready.attention;
    this.attentionTimings = ready.attentionTimings;
    this.attentionRejected = ready.attentionRejected;
    worker.on("message", (m: FromModelThread) => this.onMessage(m));
    worker.on("error", (err) =>
      this.fail(new TesseraError(Code.INTERNAL, `model thread failed: ${err.message}`)),
    );
    worker.on("exit", () => this.fail(new TesseraError(Code.UNAVAILABLE, "model thread exited")));
  }

  static start(options: ModelThreadOptions): Promise<ThreadModelRunner> {
    const worker = new Worker(new URL("./model-thread.ts", import.meta.url), { workerData: options });
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => {
        worker.terminate().catch(() => {});
        reject(err instanceof TesseraError ? err : TesseraError.from(err));
      };
      worker.once("error", onError);
      worker.once("message", (m: FromModelThread) => {
        worker.off("error", onError);
        if (m.type === "ready") resolve(new ThreadModelRunner(worker, m));
        else if (m.type === "error") {
          worker.terminate().catch(() => {});
          reject(new TesseraError(m.code, m.message));
        }
      });
    });
  }

  /** Runs one step: `tokens` are the new tokens of `seqs`, sequence after sequence. */
  step(tokens: Int32Array, seqs: SequenceStep[]): Promise<StepResult> {
    return this.call((id) => ({ type: "step", id, tokens, seqs })) as Promise<StepResult>;
  }

  /** The K/V of `blocks` (all layers): [block][layer][key|value][blockSize][kvHeads][headDim]. */
  exportBlocks(blocks: number[]): Promise<Float32Array> {
    return this.call((id) => ({ type: "export", id, blocks })) as Promise<Float32Array>;
  }

  /** Writes blocks in the layout exportBlocks returns into the pool. */
  async importBlocks(blocks: number[], data: Float32Array): Promise<void> {
    await this.call((id) => ({ type: "import", id, blocks, data }), [data.buffer as ArrayBuffer]);
  }

  private call(message: (id: number) => ToModelThread, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage(message(id), transfer);
    });
  }

  async close(): Promise<void> {
    if (this.failure) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.send({ type: "close" });
    await exited;
  }

  private send(m: ToModelThread): void {
    this.worker.postMessage(m);
  }

  private onMessage(m: FromModelThread): void {
    if (m.type === "ready") return;
    const pending = m.id === undefined ? undefined : this.pending.get(m.id);
    if (!pending || m.id === undefined) return;
    this.pending.delete(m.id);
    switch (m.type) {
      case "logits":
        pending.resolve({ logits: m.logits, runMs: m.runMs });
        return;
      case "blocks":
        pending.resolve(m.data);
        return;
      case "done":
        pending.resolve(undefined);
        return;
      case "error":
        pending.reject(new TesseraError(m.code, m.message));
        return;
      default: {
        const never: never = m;
        throw new Error(`unknown message ${JSON.stringify(never)}`);
      }
    }
  }

  private fail(err: TesseraError): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

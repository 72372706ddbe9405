// The event loop's handle on the model thread: `step` sends token ids and resolves with the logits of
// the last position; runs are queued in the thread, one at a time.
import { Worker } from "node:worker_threads";
import { Code, TesseraError } from "../../common/errors.ts";
import type { FromModelThread, ModelThreadOptions, ToModelThread } from "./messages.ts";

interface Pending {
  resolve(logits: Float32Array): void;
  reject(err: TesseraError): void;
}

export class ModelRunner {
  readonly loadMs: number;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextSeqId = 1;
  private failure: TesseraError | undefined;

  private constructor(worker: Worker, loadMs: number) {
    this.worker = worker;
    this.loadMs = loadMs;
    worker.on("message", (m: FromModelThread) => this.onMessage(m));
    worker.on("error", (err) =>
      this.fail(new TesseraError(Code.INTERNAL, `model thread failed: ${err.message}`)),
    );
    worker.on("exit", () => this.fail(new TesseraError(Code.UNAVAILABLE, "model thread exited")));
  }

  static start(options: ModelThreadOptions): Promise<ModelRunner> {
    const worker = new Worker(new URL("./model-thread.ts", import.meta.url), { workerData: options });
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => {
        worker.terminate().catch(() => {});
        reject(err instanceof TesseraError ? err : TesseraError.from(err));
      };
      worker.once("error", onError);
      worker.once("message", (m: FromModelThread) => {
        worker.off("error", onError);
        if (m.type === "ready") resolve(new ModelRunner(worker, m.loadMs));
        else if (m.type === "error") {
          worker.terminate().catch(() => {});
          reject(new TesseraError(m.code, m.message));
        }
      });
    });
  }

  /** A new sequence id; its cache lives in the model thread until `free`. */
  newSequence(): number {
    return this.nextSeqId++;
  }

  /** Runs `tokens` at positions startPosition.. of the sequence and returns the last position's logits. */
  step(seqId: number, tokens: number[], startPosition: number): Promise<Float32Array> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ type: "step", id, seqId, tokens, startPosition });
    });
  }

  free(seqId: number): void {
    if (!this.failure) this.send({ type: "free", seqId });
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
    if (m.type === "logits") pending.resolve(m.logits);
    else pending.reject(new TesseraError(m.code, m.message));
  }

  private fail(err: TesseraError): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

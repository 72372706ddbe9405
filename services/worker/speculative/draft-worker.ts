// The event loop's handle on the draft model's thread (draft-thread.ts): starts it, waits until the
// draft is loaded, sends it proposal rounds and fails every waiting round when the thread fails or
// exits. The draft's KV bookkeeping (which blocks a request holds, what the draft has seen) stays on the
// event loop, in draft-model-proposer.ts; the thread only runs steps on the block tables it is given.
import { Worker } from "node:worker_threads";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { DraftRow, DraftThreadOptions, FromDraft, ToDraft } from "./draft-messages.ts";

type Proposed = Extract<FromDraft, { type: "proposed" }>;

interface Pending {
  resolve(m: Proposed): void;
  reject(err: TesseraError): void;
}

export class DraftWorker {
  readonly attention: AttentionBackendName;
  readonly loadMs: number;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: TesseraError | undefined;
  private closed = false;
  private exited = false;

  private constructor(worker: Worker, ready: Extract<FromDraft, { type: "ready" }>) {
    this.worker = worker;
    this.attention = ready.attention;
    this.loadMs = ready.loadMs;
    worker.on("message", (m: FromDraft) => this.onMessage(m));
    worker.on("error", (err) =>
      this.fail(new TesseraError(Code.INTERNAL, `draft thread failed: ${err.message}`)),
    );
    worker.on("exit", () => {
      this.exited = true;
      if (!this.closed) this.fail(new TesseraError(Code.UNAVAILABLE, "draft thread exited"));
    });
  }

  static start(options: DraftThreadOptions): Promise<DraftWorker> {
    const worker = new Worker(new URL("./draft-thread.ts", import.meta.url), { workerData: options });
    return new Promise((resolve, reject) => {
      const onExit = () => reject(new TesseraError(Code.INTERNAL, "draft thread exited while loading"));
      worker.once("error", (err) =>
        reject(new TesseraError(Code.INTERNAL, `draft thread failed: ${err.message}`)),
      );
      worker.once("exit", onExit);
      worker.once("message", (m: FromDraft) => {
        worker.off("exit", onExit);
        if (m.type === "ready") resolve(new DraftWorker(worker, m));
        else if (m.type === "error") reject(new TesseraError(m.code, m.message));
        else reject(new TesseraError(Code.INTERNAL, `draft thread sent ${m.type} before ready`));
      });
    });
  }

  /** Runs one round; `released` are keys of requests that finished since the last round. */
  propose(rows: DraftRow[], released: number[]): Promise<Proposed> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: "propose", id, rows, released } satisfies ToDraft);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.postMessage({ type: "close" } satisfies ToDraft);
    await exited;
    this.fail(new TesseraError(Code.UNAVAILABLE, "the draft model was closed"));
  }

  private onMessage(m: FromDraft): void {
    if (m.type === "ready") return;
    if (m.type === "error" && m.id === undefined) {
      this.fail(new TesseraError(m.code, m.message));
      return;
    }
    const pending = m.id === undefined ? undefined : this.pending.get(m.id);
    if (m.id !== undefined) this.pending.delete(m.id);
    if (m.type === "error") pending?.reject(new TesseraError(m.code, m.message));
    else pending?.resolve(m);
  }

  private fail(err: TesseraError): void {
    if (this.failure) return;
    this.failure = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

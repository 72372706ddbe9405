// The event loop's handle on a shard's model thread (shard-thread.ts): `run` sends one step (or
// micro-batch) and resolves with the shard's output; while it runs, each partial sum the thread posts
// goes to the run's `reduce` (the tensor group's all-reduce, over the network) and the sum goes back.
import { Worker } from "node:worker_threads";
import { Code, TesseraError } from "../../common/errors.ts";
import type { Reduce, ShardEntry } from "./shard-executor.ts";
import type {
  FromShardThread,
  ShardThreadOptions,
  ShardThreadReady,
  ToShardThread,
} from "./shard-messages.ts";
import type { SequenceStep } from "./step-inputs.ts";

export interface ShardOutput {
  data: Float32Array;
  runMs: number;
}

interface Pending {
  resolve(result: ShardOutput | Float32Array | undefined): void;
  reject(err: TesseraError): void;
}

export class ShardWorker {
  readonly ready: ShardThreadReady;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private readonly reducers = new Map<number, Reduce>();
  private nextId = 1;
  private failure: TesseraError | undefined;

  private constructor(worker: Worker, ready: ShardThreadReady) {
    this.worker = worker;
    this.ready = ready;
    worker.on("message", (m: FromShardThread) => this.onMessage(m));
    worker.on("error", (err) =>
      this.fail(new TesseraError(Code.INTERNAL, `shard thread failed: ${err.message}`)),
    );
    worker.on("exit", () => this.fail(new TesseraError(Code.UNAVAILABLE, "shard thread exited")));
  }

  static start(o: ShardThreadOptions): Promise<ShardWorker> {
    const workerData: ShardThreadOptions = {
      modelDir: o.modelDir,
      architectureOverride: o.architectureOverride,
      threads: o.threads,
      numBlocks: o.numBlocks,
      blockSize: o.blockSize,
      attention: o.attention,
      spec: o.spec,
    };
    const worker = new Worker(new URL("./shard-thread.ts", import.meta.url), { workerData });
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => {
        worker.terminate().catch(() => {});
        reject(TesseraError.from(err));
      };
      worker.once("error", onError);
      worker.once("message", (m: FromShardThread) => {
        worker.off("error", onError);
        if (m.type === "ready") resolve(new ShardWorker(worker, m));
        else if (m.type === "error") {
          worker.terminate().catch(() => {});
          reject(new TesseraError(m.code, m.message));
        }
      });
    });
  }

  /** Runs the shard on one step's sequences from `entry`; `reduce` completes each partial sum. */
  run(seqs: SequenceStep[], entry: ShardEntry, reduce: Reduce): Promise<ShardOutput> {
    const transfer = "hidden" in entry ? [entry.hidden.buffer as ArrayBuffer] : [];
    return this.call((id) => {
      this.reducers.set(id, reduce);
      return { type: "run", id, seqs, ...entry };
    }, transfer) as Promise<ShardOutput>;
  }

  exportBlocks(blocks: number[]): Promise<Float32Array> {
    return this.call((id) => ({ type: "export", id, blocks })) as Promise<Float32Array>;
  }

  async importBlocks(blocks: number[], data: Float32Array): Promise<void> {
    await this.call((id) => ({ type: "import", id, blocks, data }), [data.buffer as ArrayBuffer]);
  }

  /** Fails the runs waiting for a sum (the group is gone) so the thread can move on and close. */
  abort(message: string): void {
    this.worker.postMessage({ type: "abort", message } satisfies ToShardThread);
  }

  async close(): Promise<void> {
    if (this.failure) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.postMessage({ type: "close" } satisfies ToShardThread);
    await exited;
  }

  private call(message: (id: number) => ToShardThread, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage(message(id), transfer);
    });
  }

  private onMessage(m: FromShardThread): void {
    if (m.type === "ready") return;
    if (m.type === "reduce") {
      this.reduce(m.id, m.segment, m.data);
      return;
    }
    const pending = m.id === undefined ? undefined : this.pending.get(m.id);
    if (!pending || m.id === undefined) return;
    this.pending.delete(m.id);
    this.reducers.delete(m.id);
    switch (m.type) {
      case "output":
        pending.resolve({ data: m.data, runMs: m.runMs });
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

  private reduce(id: number, segment: number, partial: Float32Array): void {
    const reduce = this.reducers.get(id);
    if (!reduce) return;
    reduce(segment, partial).then(
      (data) =>
        this.worker.postMessage({ type: "reduced", id, segment, data } satisfies ToShardThread, [
          data.buffer as ArrayBuffer,
        ]),
      (err: unknown) => this.abort(TesseraError.from(err).message),
    );
  }

  private fail(err: TesseraError): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.reducers.clear();
  }
}

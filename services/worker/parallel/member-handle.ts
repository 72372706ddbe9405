// The event loop's handle on a member thread (member-thread.ts), the model thread of every process (a
// single process is a group of one): starts it, learns where it listens, when its group is ready and
// when it fails, and (rank 0) sends it steps and KV requests.
import { Worker } from "node:worker_threads";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { FromMember, MemberThreadOptions, ToMember } from "./member-messages.ts";
import { type ShardCounter, ShardStats } from "./shard-stats.ts";

/**
 * The member thread's young generation. A worker thread's default (192 MiB here) lets the new space
 * grow past what the old generation has left before its limit, and V8 then starts incremental marking
 * again and again: a last stage of PP=2 ran a mark-compact every ~100 ms, its GC threads taking ~0.1 ms
 * of CPU per generated token. 16 MiB: PP=2 with two virtual engines, median of 6 rounds 1730 -> 2404
 * tok/s; TP=2 unchanged (895 -> 917); 6 MiB helped PP as much but cost TP 11%. A single process's model
 * thread is a member thread too: the engine benchmark's batch-1 decode gave 0.959 of the bare loop with
 * 16 MiB and 0.948 with the default, and `tessera serve` of the small preset 3513 tok/s against 3515
 * (16 concurrent, medians), in alternating rounds on a loaded machine: no difference to claim.
 */
const MEMBER_YOUNG_GENERATION_MB = 16;

export type ReadyInfo = Extract<FromMember, { type: "ready" }>;

interface Pending {
  resolve(value: unknown): void;
  reject(err: TesseraError): void;
}

export class MemberHandle {
  /** The port a member other than rank 0 listens on. */
  readonly listening: Promise<number>;
  /** Resolves once the whole group is wired; rejects if the member fails to start or the group fails first. */
  readonly ready: Promise<ReadyInfo>;
  /** Resolves with the reason when the group fails (or the thread dies). */
  readonly failed: Promise<TesseraError>;
  private readonly worker: Worker;
  private readonly stats = new ShardStats();
  private readonly pending = new Map<number, Pending>();
  private readonly settle: {
    listening: Pending;
    ready: Pending;
    failed(err: TesseraError): void;
  };
  private nextId = 1;
  private failure: TesseraError | undefined;
  private isReady = false;
  private closed = false;
  private exited = false;

  constructor(options: Omit<MemberThreadOptions, "stats">) {
    const deferred = <T>() => {
      let d!: Pending;
      const promise = new Promise<T>((resolve, reject) => {
        d = { resolve: resolve as (v: unknown) => void, reject };
      });
      promise.catch(() => {});
      return { promise, d };
    };
    const listening = deferred<number>();
    const ready = deferred<ReadyInfo>();
    let failed!: (err: TesseraError) => void;
    this.failed = new Promise((resolve) => {
      failed = resolve;
    });
    this.listening = listening.promise;
    this.ready = ready.promise;
    this.settle = { listening: listening.d, ready: ready.d, failed };
    this.worker = new Worker(new URL("./member-thread.ts", import.meta.url), {
      workerData: { ...options, stats: this.stats.buffer } satisfies MemberThreadOptions,
      resourceLimits: { maxYoungGenerationSizeMb: MEMBER_YOUNG_GENERATION_MB },
    });
    this.worker.on("message", (m: FromMember) => this.onMessage(m));
    this.worker.on("error", (err) =>
      this.fail(new TesseraError(Code.INTERNAL, `member thread failed: ${err.message}`)),
    );
    this.worker.on("exit", () => {
      this.exited = true;
      if (!this.closed) this.fail(new TesseraError(Code.UNAVAILABLE, "member thread exited"));
    });
  }

  /** The member's counters so far: bytes sent by frame kind, steps, runs and all-reduce waits. */
  counters(): Record<ShardCounter, number> {
    return this.stats.read();
  }

  get isServing(): boolean {
    return this.isReady && !this.failure;
  }

  call(message: (id: number) => ToMember, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage(message(id), transfer);
    });
  }

  /** Leaves the group (the peers fail) and ends the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.postMessage({ type: "close" } satisfies ToMember);
    await exited;
    this.fail(new TesseraError(Code.UNAVAILABLE, "the member was closed"));
  }

  private onMessage(m: FromMember): void {
    switch (m.type) {
      case "listening":
        this.settle.listening.resolve(m.port);
        return;
      case "ready":
        this.isReady = true;
        this.settle.ready.resolve(m);
        return;
      case "failed":
        this.fail(new TesseraError(Code.UNAVAILABLE, m.message));
        return;
      case "error":
        if (m.id === undefined) {
          this.fail(new TesseraError(m.code, m.message));
          return;
        }
        this.pending.get(m.id)?.reject(new TesseraError(m.code, m.message));
        this.pending.delete(m.id);
        return;
      default: {
        const pending = this.pending.get(m.id);
        this.pending.delete(m.id);
        pending?.resolve(m);
      }
    }
  }

  private fail(err: TesseraError): void {
    if (this.failure) return;
    this.failure = err;
    this.settle.listening.reject(err);
    this.settle.ready.reject(err);
    this.settle.failed(err);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

// A rate-limited work queue of object keys, as client-go's, under every reconcile loop
// (reconcile-loop.ts: the operator's controllers, the dev cluster's controllers, kubelet and
// scheduler): a key is queued at most once however often it is added (the worker always reads the
// latest object, so only the key matters); a key being processed is not handed to a second worker,
// and is queued again when it was added meanwhile; failures requeue it after a per-key exponential
// delay. `idle()` lets tests wait until nothing is queued or being processed.
import { Backoff, type BackoffConfig } from "../kernel/backoff.ts";
import type { Clock } from "../kernel/clock.ts";

/** Per-key retry delays: 100 ms doubling to 30 s. */
export const RETRY_BACKOFF: BackoffConfig = { initialMs: 100, maxMs: 30_000 };

export class WorkQueue {
  readonly #clock: Clock;
  readonly #retry: BackoffConfig;
  readonly #queue: string[] = [];
  /** Keys waiting to be processed (in #queue, or added while processing). */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, Backoff>();
  readonly #delayed = new Map<string, { at: number; cancel: () => void }>();
  /** Workers waiting in get() for a key (or the shutdown). */
  #waiters: (() => void)[] = [];
  #idleWaiters: (() => void)[] = [];
  #shutDown = false;

  constructor(clock: Clock, retry: BackoffConfig = RETRY_BACKOFF) {
    this.#clock = clock;
    this.#retry = retry;
  }

  add(key: string): void {
    if (this.#shutDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    this.#queue.push(key);
    this.#waiters.shift()?.();
  }

  /** Adds the key after ms (the earliest of several pending delays wins). */
  addAfter(key: string, ms: number): void {
    if (this.#shutDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.#clock.now() + ms;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    pending?.cancel();
    const cancel = this.#clock.setTimer(ms, () => {
      this.#delayed.delete(key);
      this.add(key);
    });
    this.#delayed.set(key, { at, cancel });
  }

  /** Requeues a key that failed, after its next backoff delay, which it returns. */
  addRateLimited(key: string): number {
    let backoff = this.#failures.get(key);
    if (!backoff) {
      backoff = new Backoff(this.#retry);
      this.#failures.set(key, backoff);
    }
    const delay = backoff.next();
    this.addAfter(key, delay);
    return delay;
  }

  /** The key succeeded: its next failure starts from the initial delay. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  failures(key: string): number {
    return this.#failures.get(key)?.failures ?? 0;
  }

  /**
   * The next key to process; undefined once the queue is shut down and empty. A waiting worker
   * takes its key only when it runs, so adds made meanwhile still fold into the queued key.
   */
  async get(): Promise<string | undefined> {
    for (;;) {
      const key = this.#queue.shift();
      if (key !== undefined) {
        this.#dirty.delete(key);
        this.#processing.add(key);
        return key;
      }
      if (this.#shutDown) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Processing of key ended; a key added meanwhile is queued now. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) {
      this.#dirty.delete(key);
      this.add(key);
    }
    if (!this.busy) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Keys waiting to be processed (the queue depth). */
  get length(): number {
    return this.#queue.length;
  }

  /** Whether a key is queued or being processed (keys added after a delay do not count until due). */
  get busy(): boolean {
    return this.#queue.length > 0 || this.#processing.size > 0;
  }

  /** Resolves once no key is queued or being processed, including keys those added meanwhile. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  shutdown(): void {
    this.#shutDown = true;
    for (const { cancel } of this.#delayed.values()) cancel();
    this.#delayed.clear();
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

// The loop every controller runs on, the operator's and the dev cluster's: keys ("namespace/name")
// are queued in a WorkQueue (deduplicated, one worker per key at a time) and reconciled by a few
// workers, never inside the watch callback that queued them; a worker yields to the event loop
// before each key, so a key that keeps coming back cannot starve I/O. A key that succeeds is
// forgotten (and queued again after requeueAfterMs when asked); a 409 conflict runs again without
// alarm (someone else wrote first; the next reconcile reads the newer object); any other error is
// logged and retried with the key's exponential back-off. Once stopped, queued keys are not
// reconciled. What only the operator needs, its metrics, comes in through the observer.
import type { BackoffConfig } from "../kernel/backoff.ts";
import type { Clock } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import { isConflict } from "./api-error.ts";
import { RETRY_BACKOFF, WorkQueue } from "./work-queue.ts";

export interface ReconcileOutcome {
  /** Reconcile again after this long even if nothing changes (e.g. a cleanup deadline). */
  requeueAfterMs?: number;
}

export type Reconcile = (key: string) => ReconcileOutcome | undefined | Promise<ReconcileOutcome | undefined>;

export type ReconcileResult = "success" | "error" | "conflict";

/** Sees every reconcile of a loop (the operator's metrics). */
export interface ReconcileObserver {
  /** Called once, when the loop is made, with a reader of its queue depth. */
  watchQueue(loop: string, depth: () => number): void;
  reconciled(loop: string, result: ReconcileResult, seconds: number): void;
}

export interface ReconcileLoopOptions {
  clock: Clock;
  log: Logger;
  /** Keys reconciled at the same time (default 1). */
  workers?: number;
  /** Per-key retry delays (default RETRY_BACKOFF: 100 ms doubling to 30 s). */
  retry?: BackoffConfig;
  /**
   * How a conflict runs again: "with-backoff" (default) for reconciles that read an informer
   * cache, which may not have seen the winning write yet (running at once would just conflict
   * again); "at-once" for reconciles that read the store itself (the dev cluster's controllers).
   */
  conflicts?: "with-backoff" | "at-once";
  /** Whether an error is a 409 Conflict (default: a KubeApiError with status 409). */
  isConflict?: (err: unknown) => boolean;
  observer?: ReconcileObserver;
}

export class ReconcileLoop {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #reconcile: Reconcile;
  readonly #options: ReconcileLoopOptions;
  #workers: Promise<void>[] = [];
  #stopped = false;

  constructor(name: string, reconcile: Reconcile, options: ReconcileLoopOptions) {
    this.name = name;
    this.queue = new WorkQueue(options.clock, options.retry ?? RETRY_BACKOFF);
    this.#reconcile = reconcile;
    this.#options = options;
    options.observer?.watchQueue(name, () => this.queue.length);
  }

  start(): void {
    if (this.#workers.length > 0 || this.#stopped) return;
    for (let i = 0; i < (this.#options.workers ?? 1); i++) this.#workers.push(this.#work());
  }

  /** Stops taking keys and waits for the reconciles in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.queue.shutdown();
    await Promise.all(this.#workers);
  }

  /** Whether a key is queued or being reconciled. */
  get busy(): boolean {
    return this.queue.busy;
  }

  /** Resolves once no key is queued or being reconciled (delayed keys do not count until due). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  async #work(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      const key = await this.queue.get();
      if (key === undefined) return;
      if (!this.#stopped) await this.#process(key);
      this.queue.done(key);
    }
  }

  async #process(key: string): Promise<void> {
    const { clock, log, observer } = this.#options;
    const started = clock.now();
    let result: ReconcileResult = "success";
    try {
      const outcome = await this.#reconcile(key);
      this.queue.forget(key);
      if (outcome?.requeueAfterMs !== undefined) this.queue.addAfter(key, outcome.requeueAfterMs);
    } catch (err) {
      result = (this.#options.isConflict ?? isConflict)(err) ? "conflict" : "error";
      if (result === "conflict" && this.#options.conflicts === "at-once") this.queue.add(key);
      else {
        const retryInMs = this.queue.addRateLimited(key);
        if (result === "error")
          log.warn({ controller: this.name, key, err: String(err), retryInMs }, "reconcile failed");
        else log.debug({ controller: this.name, key, retryInMs }, "conflict: requeued");
      }
    }
    observer?.reconciled(this.name, result, (clock.now() - started) / 1000);
  }
}

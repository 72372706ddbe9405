// The work loop every built-in controller runs on: keys ("namespace/name") are queued, deduplicated
// and reconciled off the watch's call stack. A reconcile can ask to run again after a delay
// (minReadySeconds, progress deadlines); a 409 conflict runs again at once; other errors retry
// with a per-key back-off (100 ms doubling to 10 s), all on the injected clock.

import type { Clock } from "../../../services/kernel/clock.ts";
import type { Logger } from "../../../services/kernel/log.ts";
import { WorkQueue } from "../apiserver/cluster/work-queue.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";

export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds. */
  requeueAfterMs?: number;
}

export type Reconcile = (key: string) => ReconcileResult | undefined;

export interface ReconcileLoopOptions {
  clock: Clock;
  log: Logger;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

export class ReconcileLoop {
  readonly name: string;
  readonly #reconcile: Reconcile;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #queue: WorkQueue<string>;
  readonly #timers = new Map<string, { at: number; cancel: () => void }>();
  readonly #failures = new Map<string, number>();
  readonly #retryInitialMs: number;
  readonly #retryMaxMs: number;
  #stopped = false;

  constructor(name: string, reconcile: Reconcile, options: ReconcileLoopOptions) {
    this.name = name;
    this.#reconcile = reconcile;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#retryInitialMs = options.retryInitialMs ?? 100;
    this.#retryMaxMs = options.retryMaxMs ?? 10_000;
    this.#queue = new WorkQueue((key) => this.#run(key));
  }

  enqueue(key: string): void {
    if (!this.#stopped) this.#queue.add(key, key);
  }

  /** Queues the key after ms, unless it is already due sooner. */
  enqueueAfter(key: string, ms: number): void {
    if (this.#stopped) return;
    const at = this.#clock.now() + ms;
    const pending = this.#timers.get(key);
    if (pending && pending.at <= at) return;
    pending?.cancel();
    const cancel = this.#clock.setTimer(ms, () => {
      this.#timers.delete(key);
      this.enqueue(key);
    });
    this.#timers.set(key, { at, cancel });
  }

  get busy(): boolean {
    return this.#queue.busy;
  }

  idle(): Promise<void> {
    return this.#queue.idle();
  }

  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers.values()) timer.cancel();
    this.#timers.clear();
  }

  #run(key: string): void {
    if (this.#stopped) return;
    try {
      const result = this.#reconcile(key);
      this.#failures.delete(key);
      if (result?.requeueAfterMs !== undefined) this.enqueueAfter(key, result.requeueAfterMs);
    } catch (err) {
      if (statusCodeOf(err) === 409) {
        this.enqueue(key);
        return;
      }
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      const delay = Math.min(this.#retryInitialMs * 2 ** (failures - 1), this.#retryMaxMs);
      this.#log.warn({ err, controller: this.name, key, retryInMs: delay }, "reconcile failed");
      this.enqueueAfter(key, delay);
    }
  }
}

export const keyOf = (namespace: string | undefined, name: string | undefined) =>
  `${namespace ?? ""}/${name ?? ""}`;

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

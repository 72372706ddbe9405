// Runs a reconciler over a work queue with a few workers: a key that succeeds is forgotten (and
// queued again after requeueAfterMs when asked); a 409 conflict is retried at once with backoff
// and no alarm (someone else wrote first; the next reconcile reads the newer object); any other
// error is logged, counted and retried with the queue's per-key backoff.

import type { Clock } from "../../services/kernel/clock.ts";
import type { Logger } from "../../services/kernel/log.ts";
import { isConflict } from "../../services/kube/api-error.ts";
import type { WorkQueue } from "../../services/kube/work-queue.ts";
import type { OperatorMetrics, ReconcileResult } from "./operator-metrics.ts";

export interface ReconcileOutcome {
  /** Reconcile again after this long even if nothing changes (e.g. a cleanup deadline). */
  requeueAfterMs?: number;
}

export type Reconcile = (key: string) => Promise<ReconcileOutcome | undefined>;

export interface ControllerDeps {
  clock: Clock;
  log: Logger;
  metrics: OperatorMetrics;
  workers: number;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #reconcile: Reconcile;
  readonly #deps: ControllerDeps;
  #workers: Promise<void>[] = [];

  constructor(name: string, queue: WorkQueue, reconcile: Reconcile, deps: ControllerDeps) {
    this.name = name;
    this.queue = queue;
    this.#reconcile = reconcile;
    this.#deps = deps;
    deps.metrics.watchQueue(name, () => queue.length);
  }

  start(): void {
    if (this.#workers.length > 0) return;
    for (let i = 0; i < this.#deps.workers; i++) this.#workers.push(this.#work());
  }

  /** Stops taking keys and waits for the reconciles in flight. */
  async stop(): Promise<void> {
    this.queue.shutdown();
    await Promise.all(this.#workers);
  }

  async #work(): Promise<void> {
    for (let key = await this.queue.get(); key !== undefined; key = await this.queue.get()) {
      await this.#process(key);
      this.queue.done(key);
    }
  }

  async #process(key: string): Promise<void> {
    const { clock, log, metrics } = this.#deps;
    const started = clock.now();
    let result: ReconcileResult = "success";
    try {
      const outcome = await this.#reconcile(key);
      this.queue.forget(key);
      if (outcome?.requeueAfterMs !== undefined) this.queue.addAfter(key, outcome.requeueAfterMs);
    } catch (err) {
      result = isConflict(err) ? "conflict" : "error";
      if (result === "error") log.warn({ controller: this.name, key, err: String(err) }, "reconcile failed");
      else log.debug({ controller: this.name, key }, "conflict: requeued");
      this.queue.addRateLimited(key);
    }
    metrics.reconciled(this.name, result, (clock.now() - started) / 1000);
  }
}

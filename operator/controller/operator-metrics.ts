// The operator's metrics (Prometheus via services/common/telemetry): reconciles by controller and
// result, their duration, and the work-queue depth. Counts are also kept as plain numbers, which
// tests read to check that a converged operator stops reconciling.
import type { Meter } from "@opentelemetry/api";
import { LATENCY_BUCKETS } from "../../services/common/telemetry/metrics.ts";

export type ReconcileResult = "success" | "error" | "conflict";

export class OperatorMetrics {
  readonly #reconciles;
  readonly #errors;
  readonly #duration;
  readonly #counts = new Map<string, number>();
  readonly #depth = new Map<string, () => number>();

  constructor(meter: Meter) {
    this.#reconciles = meter.createCounter("tessera_operator_reconciles", {
      description: "Reconciles by controller and result (success, error, conflict).",
    });
    this.#errors = meter.createCounter("tessera_operator_reconcile_errors", {
      description: "Reconciles that failed (and were retried with backoff).",
    });
    this.#duration = meter.createHistogram("tessera_operator_reconcile_duration_seconds", {
      description: "Time one reconcile took.",
      unit: "s",
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
    });
    meter
      .createObservableGauge("tessera_operator_queue_depth", {
        description: "Keys waiting in the work queue.",
      })
      .addCallback((result) => {
        for (const [controller, depth] of this.#depth) result.observe(depth(), { controller });
      });
  }

  watchQueue(controller: string, depth: () => number): void {
    this.#depth.set(controller, depth);
  }

  reconciled(controller: string, result: ReconcileResult, seconds: number): void {
    this.#reconciles.add(1, { controller, result });
    if (result === "error") this.#errors.add(1, { controller });
    this.#duration.record(seconds, { controller });
    this.#counts.set(controller, this.reconciles(controller) + 1);
  }

  /** Reconciles of one controller since start. */
  reconciles(controller: string): number {
    return this.#counts.get(controller) ?? 0;
  }
}

// The operator's metrics (Prometheus via services/kernel/telemetry): reconciles by controller and
// result, their duration, the work-queue depth, and each InferenceModel's desired and ready replicas
// as its informer cache sees them. Counts are also kept as plain numbers, which tests read to check
// that a converged operator stops reconciling. Error counters start at 0 for every controller, so
// alerts and dashboards see the series before the first error.
import type { Meter } from "@opentelemetry/api";
import type { InferenceModel } from "../../services/api/kinds.ts";
import { LATENCY_BUCKETS } from "../../services/kernel/telemetry/metrics.ts";
import type { ReconcileObserver, ReconcileResult } from "../../services/kube/reconcile-loop.ts";

export class OperatorMetrics implements ReconcileObserver {
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
    const desired = meter.createObservableGauge("tessera_operator_model_desired_replicas", {
      description: "Replicas an InferenceModel asks for (decode replicas when disaggregated).",
    });
    const ready = meter.createObservableGauge("tessera_operator_model_ready_replicas", {
      description: "Replicas of an InferenceModel whose pods are all Ready.",
    });
    meter.addBatchObservableCallback(
      (result) => {
        for (const model of this.#models()) {
          const labels = {
            model_namespace: model.metadata.namespace ?? "",
            model: model.metadata.name ?? "",
          };
          const spec = (model.spec ?? {}) as { replicas?: unknown };
          result.observe(desired, typeof spec.replicas === "number" ? spec.replicas : 1, labels);
          result.observe(ready, model.status?.readyReplicas ?? 0, labels);
        }
      },
      [desired, ready],
    );
  }

  #models: () => readonly InferenceModel[] = () => [];

  watchQueue(controller: string, depth: () => number): void {
    this.#depth.set(controller, depth);
    this.#errors.add(0, { controller });
  }

  /** Reports the replicas of these models (the operator's informer cache; empty on a standby). */
  watchModels(models: () => readonly InferenceModel[]): void {
    this.#models = models;
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

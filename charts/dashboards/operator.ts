// Operator: reconciles, errors, work-queue depth, and the ready replicas of every InferenceModel.
import { type DashboardSpec, quantiles, stat, timeseries } from "./panel-kit.ts";

const rate = (metric: string) => `rate(${metric}[$__rate_interval])`;

export const operator: DashboardSpec = {
  uid: "tessera-operator",
  title: "Tessera / Operator",
  description: "The operator's reconciles, errors and queue, and the replicas of every InferenceModel.",
  rows: [
    {
      title: "Models",
      panels: [
        stat(
          "Models without a ready replica",
          "InferenceModels that ask for replicas but have none with all pods Ready (they serve nothing).",
          "short",
          "count((max by (model_namespace, model) (tessera_operator_model_ready_replicas) == 0) and (max by (model_namespace, model) (tessera_operator_model_desired_replicas) > 0)) or vector(0)",
        ),
        timeseries(
          "Ready and desired replicas",
          "Per InferenceModel, as the leading operator sees it.",
          "short",
          [
            {
              expr: "max by (model_namespace, model) (tessera_operator_model_ready_replicas)",
              legend: "{{model_namespace}}/{{model}} ready",
            },
            {
              expr: "max by (model_namespace, model) (tessera_operator_model_desired_replicas)",
              legend: "{{model_namespace}}/{{model}} desired",
            },
          ],
          18,
        ),
      ],
    },
    {
      title: "Reconciles",
      panels: [
        timeseries(
          "Reconciles/s",
          "Reconciles by controller and result (success, conflict, error).",
          "short",
          [
            {
              expr: `sum by (controller, result) (${rate("tessera_operator_reconciles_total")})`,
              legend: "{{controller}} {{result}}",
            },
          ],
          8,
        ),
        timeseries(
          "Reconcile errors/s",
          "Reconciles that failed and were retried with backoff.",
          "short",
          [
            {
              expr: `sum by (controller) (${rate("tessera_operator_reconcile_errors_total")})`,
              legend: "{{controller}}",
            },
          ],
          8,
        ),
        timeseries(
          "Work-queue depth",
          "Keys waiting to be reconciled, per controller.",
          "short",
          [{ expr: "max by (controller) (tessera_operator_queue_depth)", legend: "{{controller}}" }],
          8,
        ),
        timeseries(
          "Reconcile duration",
          "Time one reconcile takes.",
          "s",
          quantiles("tessera_operator_reconcile_duration_seconds", "", "controller"),
          24,
        ),
      ],
    },
  ],
};

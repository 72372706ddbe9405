import assert from "node:assert/strict";
import type { InferenceModel } from "../../services/api/kinds.ts";
import { Metrics } from "../../services/kernel/telemetry/metrics.ts";
import { scrape } from "../../services/kernel/telemetry/testing/scrape.ts";
import { OperatorMetrics } from "./operator-metrics.ts";

const model = (name: string, replicas: number | undefined, ready?: number): InferenceModel => ({
  apiVersion: "serving.tessera.dev/v1alpha1",
  kind: "InferenceModel",
  metadata: { name, namespace: "serving" },
  spec: replicas === undefined ? {} : { replicas },
  ...(ready === undefined ? {} : { status: { readyReplicas: ready } }),
});

describe("OperatorMetrics", () => {
  it("reports every model's desired and ready replicas, and errors from 0 per controller", async () => {
    const metrics = new Metrics();
    const operator = new OperatorMetrics(metrics.meter("spec"));
    operator.watchQueue("inferencemodel", () => 2);
    operator.watchModels(() => [model("llama", 3, 2), model("fresh", undefined)]);
    try {
      const text = await scrape(metrics);
      assert.match(text, /^tessera_operator_reconcile_errors_total\{controller="inferencemodel"\} 0$/m);
      assert.match(text, /^tessera_operator_queue_depth\{controller="inferencemodel"\} 2$/m);
      const series = (name: string, m: string) =>
        new RegExp(
          `^tessera_operator_model_${name}_replicas\\{model_namespace="serving",model="${m}"\\} (\\d+)$`,
          "m",
        );
      assert.equal(text.match(series("desired", "llama"))?.[1], "3");
      assert.equal(text.match(series("ready", "llama"))?.[1], "2");
      assert.equal(text.match(series("desired", "fresh"))?.[1], "1", "spec.replicas defaults to 1");
      assert.equal(text.match(series("ready", "fresh"))?.[1], "0");
    } finally {
      await metrics.shutdown();
    }
  });
});

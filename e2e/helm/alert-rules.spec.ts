// The chart's PrometheusRule, rendered by helm, checked by real promtool: `check rules`, then `test
// rules` with series that must fire each alert (and series that must not).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { must, render } from "./chart-tool.ts";

function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile("promtool", args, { cwd }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, output: stdout + stderr }),
    );
  });
}

const requests = (model: string, code: string, perMinute: number) => ({
  series: `tessera_router_requests_total{model="${model}",protocol="grpc",code="${code}"}`,
  values: `0+${perMinute}x80`,
});
const ttft = (model: string, fastPerMinute: number, allPerMinute: number) => [
  {
    series: `tessera_time_to_first_token_seconds_bucket{model="${model}",le="2.5"}`,
    values: `0+${fastPerMinute}x80`,
  },
  { series: `tessera_time_to_first_token_seconds_count{model="${model}"}`, values: `0+${allPerMinute}x80` },
];
const burnDescription = (window: string, short: string, burn: number) =>
  `The objective is 95% of requests with a first token within 2.5s; over ${window} (and ${short}) the share of slower requests is ${burn} times the budget.`;

const TESTS = {
  rule_files: ["rules.yaml"],
  evaluation_interval: "1m",
  tests: [
    {
      interval: "1m",
      input_series: [
        requests("failing", "OK", 90),
        requests("failing", "UNAVAILABLE", 10),
        requests("fine", "OK", 100),
        // Client errors are not the service failing.
        requests("fine", "INVALID_ARGUMENT", 50),
        ...ttft("slow", 10, 100),
        ...ttft("quick", 99, 100),
        { series: 'tessera_kv_cache_used_blocks{model="m",instance="w0"}', values: "95x80" },
        { series: 'tessera_kv_cache_total_blocks{model="m",instance="w0"}', values: "100x80" },
        { series: 'tessera_kv_cache_used_blocks{model="m",instance="w1"}', values: "50x80" },
        { series: 'tessera_kv_cache_total_blocks{model="m",instance="w1"}', values: "100x80" },
        {
          series: 'tessera_operator_model_ready_replicas{model_namespace="ns",model="down"}',
          values: "0x80",
        },
        {
          series: 'tessera_operator_model_desired_replicas{model_namespace="ns",model="down"}',
          values: "2x80",
        },
        { series: 'tessera_operator_model_ready_replicas{model_namespace="ns",model="up"}', values: "1x80" },
        {
          series: 'tessera_operator_model_desired_replicas{model_namespace="ns",model="up"}',
          values: "1x80",
        },
        {
          series: 'tessera_operator_model_ready_replicas{model_namespace="ns",model="idle"}',
          values: "0x80",
        },
        {
          series: 'tessera_operator_model_desired_replicas{model_namespace="ns",model="idle"}',
          values: "0x80",
        },
      ],
      alert_rule_test: [
        {
          eval_time: "4m",
          alertname: "TesseraHighErrorRate",
          exp_alerts: [],
        },
        {
          eval_time: "12m",
          alertname: "TesseraHighErrorRate",
          exp_alerts: [
            {
              exp_labels: { severity: "critical", model: "failing" },
              exp_annotations: {
                summary: "failing: 10% of requests fail",
                description:
                  "More than 5% of the router's requests for the model end with a server-side error (UNAVAILABLE, INTERNAL, DEADLINE_EXCEEDED, ...) over 5 minutes.",
              },
            },
          ],
        },
        {
          eval_time: "70m",
          alertname: "TesseraTimeToFirstTokenBudgetBurn",
          exp_alerts: [
            {
              exp_labels: { severity: "critical", window: "1h", model: "slow" },
              exp_annotations: {
                summary: "slow: time to first token burns its error budget 14.4x too fast",
                description: burnDescription("1h", "5m", 14.4),
              },
            },
            {
              exp_labels: { severity: "warning", window: "6h", model: "slow" },
              exp_annotations: {
                summary: "slow: time to first token burns its error budget 6x too fast",
                description: burnDescription("6h", "30m", 6),
              },
            },
          ],
        },
        {
          eval_time: "12m",
          alertname: "TesseraKvCacheUsageHigh",
          exp_alerts: [
            {
              exp_labels: { severity: "warning", model: "m", instance: "w0" },
              exp_annotations: {
                summary: "m on w0: 95% of KV-cache blocks in use",
                description:
                  "A worker's KV cache stays over 90% full; requests wait or are preempted. Add replicas or KV memory.",
              },
            },
          ],
        },
        {
          eval_time: "7m",
          alertname: "TesseraNoReadyReplica",
          exp_alerts: [
            {
              exp_labels: { severity: "critical", model_namespace: "ns", model: "down" },
              exp_annotations: {
                summary: "InferenceModel ns/down has no ready replica",
                description:
                  "No replica of the model has all of its pods Ready for 5 minutes; it serves no request. See kubectl describe inferencemodel.",
              },
            },
          ],
        },
      ],
    },
  ],
};

describe("the chart's alert rules (promtool)", function () {
  this.timeout(30_000);
  let dir: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-rules-"));
    const objects = await render("--set", "monitoring.prometheusRule.enabled=true");
    const rule = must(objects, "PrometheusRule");
    writeFileSync(path.join(dir, "rules.yaml"), stringify(rule["spec"]));
    writeFileSync(path.join(dir, "tests.yaml"), stringify(TESTS));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("are valid Prometheus rules (promtool check rules)", async () => {
    const result = await promtool(["check", "rules", "rules.yaml"], dir);
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /SUCCESS: 5 rules found/);
  });

  it("fire on failing series and stay quiet on healthy ones (promtool test rules)", async () => {
    const result = await promtool(["test", "rules", "tests.yaml"], dir);
    assert.equal(result.code, 0, result.output);
  });
});

// Disaggregation: KV blocks moving through Redis between prefill and decode workers.
import { type DashboardSpec, stat, text, timeseries } from "./panel-kit.ts";

const m = `{model=~"$model"}`;
const rate = (metric: string, selector = m) => `rate(${metric}${selector}[$__rate_interval])`;

export const disaggregation: DashboardSpec = {
  uid: "tessera-disaggregation",
  title: "Tessera / Disaggregation",
  description: "KV transfer through Redis: bytes, latency, block results, fallbacks and checksum failures.",
  modelsFrom: "tessera_engine_info",
  rows: [
    {
      title: "Transfer",
      panels: [
        timeseries("KV bytes/s", "Bytes of KV blocks written to (out) and read from (in) Redis.", "Bps", [
          {
            expr: `sum by (model, direction) (${rate("tessera_kv_transfer_bytes_total")})`,
            legend: "{{model}} {{direction}}",
          },
        ]),
        timeseries(
          "KV operation latency",
          "p50 and p95 of one store operation (a pipelined batch of blocks), by operation.",
          "s",
          [
            ...[0.5, 0.95].map((q) => ({
              expr: `histogram_quantile(${q}, sum by (le, op) (${rate("tessera_kv_transfer_duration_seconds_bucket")}))`,
              legend: `{{op}} p${q * 100}`,
            })),
          ],
        ),
        timeseries(
          "Blocks/s by result",
          "Blocks stored, and read as hit, miss, checksum_failure, mismatch or error.",
          "short",
          [
            {
              expr: `sum by (op, result) (${rate("tessera_kv_transfer_blocks_total")})`,
              legend: "{{op}} {{result}}",
            },
          ],
        ),
        timeseries(
          "Fallbacks/s",
          "Remote blocks not used (unavailable, miss, no_free_blocks, store_failed): recomputed, or the request failed per policy.",
          "short",
          [
            {
              expr: `sum by (model, reason) (${rate("tessera_kv_fallbacks_total")})`,
              legend: "{{model}} {{reason}}",
            },
          ],
        ),
      ],
    },
    {
      title: "Integrity",
      panels: [
        stat(
          "Checksum failures",
          "Blocks whose checksum did not verify on read, in the time range (each was recomputed, never used).",
          "short",
          `sum(increase(tessera_kv_transfer_blocks_total{model=~"$model",op="get",result="checksum_failure"}[$__range]))`,
          8,
        ),
        stat(
          "Remote hit ratio",
          "Share of blocks looked up in Redis that were found and verified.",
          "percentunit",
          `sum(${rate("tessera_kv_transfer_blocks_total", `{model=~"$model",op="get",result="hit"}`)}) / sum(${rate("tessera_kv_transfer_blocks_total", `{model=~"$model",op="get"}`)})`,
          8,
        ),
        text(
          "Migrations",
          "Request migration (resuming a stream on another decode worker from its KV in Redis) is not built yet, so there is no migration metric to chart.",
          8,
          4,
        ),
      ],
    },
  ],
};

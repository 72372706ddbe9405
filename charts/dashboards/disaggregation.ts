// Disaggregation: how the router served requests (disaggregated, or a fallback to one worker and why),
// and KV blocks moving through Redis between prefill and decode workers.
import { type DashboardSpec, stat, timeseries } from "./panel-kit.ts";

const m = `{model=~"$model"}`;
const rate = (metric: string, selector = m) => `rate(${metric}${selector}[$__rate_interval])`;

export const disaggregation: DashboardSpec = {
  uid: "tessera-disaggregation",
  title: "Tessera / Disaggregation",
  description:
    "Serving paths (disaggregated, fallback and why, migrated) and KV transfer through Redis: bytes, latency, block results, fallbacks and checksum failures.",
  modelsFrom: "tessera_engine_info",
  rows: [
    {
      title: "Serving paths",
      panels: [
        timeseries(
          "Fallback rate",
          "Share of a model's requests that fell back to one worker although the model has prefill and decode endpoints (tessera_router_serving_paths_total): a Redis down or hung, a missing prefill or decode side, penalties that need one worker. 0 for a colocated model.",
          "percentunit",
          [
            {
              expr: `sum by (model) (${rate("tessera_router_serving_paths_total", `{model=~"$model",path="fallback"}`)}) / sum by (model) (${rate("tessera_router_serving_paths_total", `{model=~"$model"}`)})`,
              legend: "{{model}}",
            },
          ],
        ),
        timeseries(
          "Requests/s by serving path",
          "colocated, disaggregated, fallback (by reason: kv_unavailable, kv_write_failed, no_prefill_endpoint, no_decode_endpoint, prefill_failed, sampling), migrated (resumed on another worker), cached.",
          "reqps",
          [
            {
              expr: `sum by (path, reason) (${rate("tessera_router_serving_paths_total")})`,
              legend: "{{path}} {{reason}}",
            },
          ],
        ),
        timeseries(
          "Prompt tokens/s by source",
          "Where the workers' prompt KV came from: computed, their local prefix cache, or read from Redis (kv_transfer).",
          "short",
          [
            {
              expr: `sum by (source) (${rate("tessera_prompt_tokens_by_source_total")})`,
              legend: "{{source}}",
            },
          ],
        ),
      ],
    },
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
        stat(
          "Migrations resumed",
          "Streams whose worker failed mid-way and that resumed on another from their KV in Redis, in the time range.",
          "short",
          `sum(increase(tessera_router_migrations_total{outcome="resumed"}[$__range]))`,
          8,
        ),
      ],
    },
  ],
};

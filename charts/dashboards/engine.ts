// Engine: the batch each worker runs, its KV cache and prefix cache, preemptions and attention backend.
import { type DashboardSpec, quantiles, table, timeseries } from "./panel-kit.ts";

const m = `{model=~"$model"}`;
const rate = (metric: string) => `rate(${metric}${m}[$__rate_interval])`;

export const engine: DashboardSpec = {
  uid: "tessera-engine",
  title: "Tessera / Engine",
  description: "Continuous batching, KV cache and prefix cache of each worker.",
  modelsFrom: "tessera_engine_info",
  rows: [
    {
      title: "Batch",
      panels: [
        timeseries(
          "Running and waiting requests",
          "Requests in the running batch, and waiting (preempted included), per worker.",
          "short",
          [
            {
              expr: `sum by (model, instance) (tessera_running_requests${m})`,
              legend: "{{instance}} running",
            },
            {
              expr: `sum by (model, instance) (tessera_waiting_requests${m})`,
              legend: "{{instance}} waiting",
            },
          ],
        ),
        timeseries(
          "Tokens per step (batch size)",
          "Tokens computed per engine step: the mean, p50 and p95.",
          "short",
          [
            {
              expr: `sum(${rate("tessera_step_batched_tokens_sum")}) / sum(${rate("tessera_step_batched_tokens_count")})`,
              legend: "mean",
            },
            ...quantiles("tessera_step_batched_tokens", m).slice(0, 2),
          ],
        ),
      ],
    },
    {
      title: "KV cache",
      panels: [
        timeseries(
          "KV cache usage",
          "Share of each worker's KV blocks in use.",
          "percentunit",
          [
            {
              expr: `sum by (model, instance) (tessera_kv_cache_used_blocks${m}) / sum by (model, instance) (tessera_kv_cache_total_blocks${m})`,
              legend: "{{instance}}",
            },
          ],
          8,
        ),
        timeseries(
          "Prefix cache hit rate",
          "Share of full prompt blocks found in the prefix cache.",
          "percentunit",
          [
            {
              expr: `sum by (model) (${rate("tessera_prefix_cache_hits_total")}) / sum by (model) (${rate("tessera_prefix_cache_queries_total")})`,
              legend: "{{model}}",
            },
          ],
          8,
        ),
        timeseries(
          "Preemptions/s",
          "Requests preempted to free KV blocks (recomputed later).",
          "short",
          [
            {
              expr: `sum by (model, instance) (${rate("tessera_preemptions_total")})`,
              legend: "{{instance}}",
            },
          ],
          8,
        ),
      ],
    },
    {
      title: "Requests",
      panels: [
        timeseries(
          "Time in each phase (p95)",
          "Queueing, prefill (to the first token) and decode (first to last token).",
          "s",
          (["queue", "prefill", "decode"] as const).map((phase) => ({
            expr: `histogram_quantile(0.95, sum by (le) (${rate(`tessera_request_${phase}_time_seconds_bucket`)}))`,
            legend: phase,
          })),
        ),
        timeseries(
          "Finished requests/s by reason",
          "stop, length, stop_string, context, cancelled or error.",
          "reqps",
          [{ expr: `sum by (reason) (${rate("tessera_requests_finished_total")})`, legend: "{{reason}}" }],
        ),
        table(
          "Workers: attention backend and KV pool",
          "The attention implementation each worker chose at load (timed), its block size and number of KV blocks.",
          `max by (model, instance, attention_backend, block_size, num_blocks) (tessera_engine_info${m})`,
        ),
      ],
    },
  ],
};

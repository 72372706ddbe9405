// Router: load per endpoint, routing decisions, health ejections, retries, response cache, admission.
import { type DashboardSpec, quantiles, timeseries } from "./panel-kit.ts";

const rate = (metric: string, selector = "") => `rate(${metric}${selector}[$__rate_interval])`;
const m = `{model=~"$model"}`;

export const router: DashboardSpec = {
  uid: "tessera-router",
  title: "Tessera / Router",
  description: "Per-endpoint load, routing picks, ejections, retries, cache and admission of the router.",
  modelsFrom: "tessera_router_requests_total",
  rows: [
    {
      title: "Endpoints",
      panels: [
        timeseries(
          "In flight per endpoint",
          "Requests the router has in flight on each worker endpoint.",
          "short",
          [{ expr: "sum by (endpoint) (tessera_router_endpoint_in_flight)", legend: "{{endpoint}}" }],
          8,
        ),
        timeseries(
          "Attempts/s per endpoint",
          "Attempts sent to each endpoint, by status.",
          "reqps",
          [
            {
              expr: `sum by (endpoint, code) (${rate("tessera_router_endpoint_requests_total")})`,
              legend: "{{endpoint}} {{code}}",
            },
          ],
          8,
        ),
        timeseries(
          "Time to first token per endpoint (p95)",
          "As the router measures it, per endpoint.",
          "s",
          [
            {
              expr: `histogram_quantile(0.95, sum by (le, endpoint) (${rate("tessera_router_endpoint_time_to_first_token_seconds_bucket")}))`,
              legend: "{{endpoint}}",
            },
          ],
          8,
        ),
      ],
    },
    {
      title: "Routing",
      panels: [
        timeseries(
          "Picks/s per scorer",
          "Picks where the scorer's own best candidate was the endpoint picked.",
          "short",
          [{ expr: `sum by (scorer) (${rate("tessera_router_picks_total")})`, legend: "{{scorer}}" }],
          8,
        ),
        timeseries(
          "Hash-home picks",
          "Share of picks that went to the key's home on the hash ring.",
          "percentunit",
          [
            {
              expr: `sum(${rate("tessera_router_home_picks_total", '{home="true"}')}) / sum(${rate("tessera_router_home_picks_total")})`,
              legend: "home",
            },
          ],
          8,
        ),
        timeseries(
          "Time per routing plugin (p99)",
          "Time each filter, scorer and picker takes per request.",
          "s",
          [
            {
              expr: `histogram_quantile(0.99, sum by (le, plugin) (${rate("tessera_router_plugin_duration_seconds_bucket")}))`,
              legend: "{{plugin}}",
            },
          ],
          8,
        ),
      ],
    },
    {
      title: "Failures and admission",
      panels: [
        timeseries(
          "Ejections/s",
          "Endpoints ejected after consecutive failures (probed back with backoff).",
          "short",
          [{ expr: `sum by (endpoint) (${rate("tessera_router_ejections_total")})`, legend: "{{endpoint}}" }],
          8,
        ),
        timeseries(
          "Retries/s",
          "Requests retried on another endpoint before their first token.",
          "short",
          [{ expr: `sum by (model) (${rate("tessera_router_retries_total", m)})`, legend: "{{model}}" }],
          8,
        ),
        timeseries(
          "Admission rejections/s",
          "Requests refused before routing, by reason.",
          "reqps",
          [
            {
              expr: `sum by (reason) (${rate("tessera_router_admission_rejections_total")})`,
              legend: "{{reason}}",
            },
          ],
          8,
        ),
        timeseries(
          "Response cache lookups/s",
          "Deterministic requests answered from the cache (hit), joined to one in flight (coalesced), or not.",
          "short",
          [{ expr: `sum by (result) (${rate("tessera_router_cache_lookups_total")})`, legend: "{{result}}" }],
          8,
        ),
        timeseries(
          "Admission queue depth",
          "Requests waiting for admission, per model.",
          "short",
          [{ expr: `sum by (model) (tessera_router_queue_depth${m})`, legend: "{{model}}" }],
          8,
        ),
        timeseries(
          "Request duration through the router",
          "From arrival at the router to the end of the response.",
          "s",
          quantiles("tessera_router_request_duration_seconds", m),
          8,
        ),
      ],
    },
  ],
};

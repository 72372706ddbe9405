// Overview: traffic, errors, latency percentiles and token throughput of every model.
import { type DashboardSpec, quantiles, stat, timeseries } from "./panel-kit.ts";

export const SERVER_ERRORS = "UNKNOWN|INTERNAL|UNAVAILABLE|DEADLINE_EXCEEDED|DATA_LOSS";
const m = `{model=~"$model"}`;
const rate = (metric: string, selector = m) => `rate(${metric}${selector}[$__rate_interval])`;

export const overview: DashboardSpec = {
  uid: "tessera-overview",
  title: "Tessera / Overview",
  description: "Requests, errors, latency and tokens of every model served by Tessera.",
  modelsFrom: "tessera_engine_info",
  rows: [
    {
      title: "Now",
      panels: [
        stat(
          "Requests/s",
          "Requests finished by the router per second.",
          "reqps",
          `sum(${rate("tessera_router_requests_total")})`,
        ),
        stat(
          "Server error ratio",
          `Share of requests ending with a server-side error (${SERVER_ERRORS}).`,
          "percentunit",
          `(sum(${rate("tessera_router_requests_total", `{model=~"$model",code=~"${SERVER_ERRORS}"}`)}) or vector(0)) / sum(${rate("tessera_router_requests_total")})`,
        ),
        stat(
          "Time to first token p95",
          "95th percentile of the time from arrival at a worker to its first token.",
          "s",
          `histogram_quantile(0.95, sum by (le) (${rate("tessera_time_to_first_token_seconds_bucket")}))`,
        ),
        stat(
          "Generated tokens/s",
          "Tokens generated per second by every worker.",
          "short",
          `sum(${rate("tessera_generation_tokens_total")})`,
        ),
      ],
    },
    {
      title: "Traffic",
      panels: [
        timeseries(
          "Requests/s",
          "Requests finished by the router, by model and front door (grpc, http).",
          "reqps",
          [
            {
              expr: `sum by (model, protocol) (${rate("tessera_router_requests_total")})`,
              legend: "{{model}} {{protocol}}",
            },
          ],
        ),
        timeseries("Failed requests/s", "Requests that did not end OK, by status code.", "reqps", [
          {
            expr: `sum by (model, code) (${rate("tessera_router_requests_total", `{model=~"$model",code!="OK"}`)})`,
            legend: "{{model}} {{code}}",
          },
        ]),
      ],
    },
    {
      title: "Latency",
      panels: [
        timeseries(
          "Time to first token",
          "From a request's arrival at a worker to its first token (queueing and prefill).",
          "s",
          quantiles("tessera_time_to_first_token_seconds", m),
          8,
        ),
        timeseries(
          "Inter-token latency",
          "Time between consecutive tokens of a request.",
          "s",
          quantiles("tessera_inter_token_latency_seconds", m),
          8,
        ),
        timeseries(
          "End-to-end latency",
          "From a request's arrival at a worker to its last token.",
          "s",
          quantiles("tessera_e2e_request_latency_seconds", m),
          8,
        ),
      ],
    },
    {
      title: "Tokens",
      panels: [
        timeseries(
          "Tokens/s",
          "Prompt tokens of finished requests and generated tokens, per second.",
          "short",
          [
            {
              expr: `sum by (model) (${rate("tessera_generation_tokens_total")})`,
              legend: "{{model}} generated",
            },
            { expr: `sum by (model) (${rate("tessera_prompt_tokens_total")})`, legend: "{{model}} prompt" },
          ],
          24,
        ),
      ],
    },
  ],
};

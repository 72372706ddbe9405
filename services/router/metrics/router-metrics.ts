// The router's metrics (Prometheus text through services/kernel/telemetry/metrics.ts): requests by
// model and status, per-endpoint attempts, in flight, latency and time to first token, picks per
// scorer and hash-home picks, time per routing plugin, ejections, retries, migrations, cache lookups,
// queue depth and admission rejections. Labels come from small sets (models, endpoints, plugins, status codes).
// Counters and histograms are aggregated in place (kernel/telemetry/aggregated-instruments.ts): each
// series is found by its label values (`at`), so recording allocates nothing; ~10 are recorded per
// request. The two gauges are OpenTelemetry's, read when scraped.
import { Code } from "../../kernel/errors.ts";
import type {
  AggregatedCounter,
  AggregatedHistogram,
} from "../../kernel/telemetry/aggregated-instruments.ts";
import { LATENCY_BUCKETS, type Metrics } from "../../kernel/telemetry/metrics.ts";
import type { ServingPath } from "../core/serving-path.ts";
import type { RoutingObserver } from "../routing/routing-pipeline.ts";

/** Plugin timings are microseconds: 1 µs to 10 ms. */
const PLUGIN_BUCKETS = [1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 1e-2];

export type CacheResult = "hit" | "miss" | "coalesced";

const REJECTION_REASONS = [
  "unauthenticated",
  "invalid",
  "rate_limited",
  "queue_full",
  "unavailable",
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

const MIGRATION_OUTCOMES = ["resumed", "failed", "not_resumable"] as const;
/**
 * What became of a stream whose endpoint failed mid-way: resumed on another endpoint (it streamed
 * again), failed (no endpoint could resume it), not_resumable (not tried: migrations are off or used
 * up, the request's penalties depend on its own output, or its colocated endpoint had no KV tier).
 */
export type MigrationOutcome = (typeof MIGRATION_OUTCOMES)[number];

export interface Gauges {
  endpointsInFlight: () => { endpoint: string; inFlight: number }[];
  queueDepths: () => { model: string; queued: number }[];
}

export class RouterMetrics implements RoutingObserver {
  readonly #requests: AggregatedCounter;
  readonly #duration: AggregatedHistogram;
  readonly #endpointRequests: AggregatedCounter;
  readonly #endpointDuration: AggregatedHistogram;
  readonly #endpointFirstToken: AggregatedHistogram;
  readonly #picks: AggregatedCounter;
  readonly #homePicks: AggregatedCounter;
  readonly #plugin: AggregatedHistogram;
  readonly #ejections: AggregatedCounter;
  readonly #retries: AggregatedCounter;
  readonly #migrations: AggregatedCounter;
  readonly #cache: AggregatedCounter;
  readonly #rejections: AggregatedCounter;
  readonly #paths: AggregatedCounter;

  constructor(metrics: Pick<Metrics, "meter" | "aggregated">, gauges: Gauges) {
    const instruments = metrics.aggregated("tessera.router");
    const latency = { unit: "s", boundaries: LATENCY_BUCKETS };
    this.#requests = instruments.counter("tessera_router_requests", {
      description: "Finished requests by model, front door and status.",
      labels: ["model", "protocol", "code"],
    });
    this.#duration = instruments.histogram("tessera_router_request_duration_seconds", {
      description: "Request duration through the router, by model.",
      labels: ["model"],
      ...latency,
    });
    this.#endpointRequests = instruments.counter("tessera_router_endpoint_requests", {
      description: "Attempts sent to each endpoint, by status.",
      labels: ["endpoint", "code"],
    });
    this.#endpointDuration = instruments.histogram("tessera_router_endpoint_duration_seconds", {
      description: "Attempt duration per endpoint.",
      labels: ["endpoint"],
      ...latency,
    });
    this.#endpointFirstToken = instruments.histogram("tessera_router_endpoint_time_to_first_token_seconds", {
      description: "Time to first token per endpoint.",
      labels: ["endpoint"],
      ...latency,
    });
    this.#picks = instruments.counter("tessera_router_picks", {
      description: "Picks per scorer: the scorer's own best candidate was the endpoint picked.",
      labels: ["scorer"],
    });
    this.#homePicks = instruments.counter("tessera_router_home_picks", {
      description: "Picks by whether the endpoint was the key's home on the hash ring.",
      labels: ["home"],
    });
    this.#plugin = instruments.histogram("tessera_router_plugin_duration_seconds", {
      description: "Time spent in each routing plugin per request.",
      unit: "s",
      labels: ["plugin"],
      boundaries: PLUGIN_BUCKETS,
    });
    this.#ejections = instruments.counter("tessera_router_ejections", {
      description: "Endpoint ejections after consecutive failures.",
      labels: ["endpoint"],
    });
    this.#retries = instruments.counter("tessera_router_retries", {
      description: "Requests retried on another endpoint before their first token.",
      labels: ["model"],
    });
    this.#migrations = instruments.counter("tessera_router_migrations", {
      description: "Streams whose endpoint failed mid-way, by what became of them.",
      labels: ["outcome"],
    });
    for (const outcome of MIGRATION_OUTCOMES) this.#migrations.at(outcome);
    this.#cache = instruments.counter("tessera_router_cache_lookups", {
      description: "Response cache lookups by result.",
      labels: ["result"],
    });
    this.#rejections = instruments.counter("tessera_router_admission_rejections", {
      description: "Requests refused before routing, by reason.",
      labels: ["reason"],
    });
    // Every reason starts at 0, so alerts and dashboards see the series before the first refusal.
    for (const reason of REJECTION_REASONS) this.#rejections.at(reason);
    this.#paths = instruments.counter("tessera_router_serving_paths", {
      description:
        "Requests served (at least in part) by how: colocated, disaggregated, fallback to one worker " +
        "(reason: why), migrated (reason: the path before), cached.",
      labels: ["model", "path", "reason"],
    });
    const meter = metrics.meter("tessera.router");
    meter
      .createObservableGauge("tessera_router_endpoint_in_flight", {
        description: "Requests in flight per endpoint.",
      })
      .addCallback((result) => {
        for (const { endpoint, inFlight } of gauges.endpointsInFlight())
          result.observe(inFlight, { endpoint });
      });
    meter
      .createObservableGauge("tessera_router_queue_depth", {
        description: "Requests waiting for admission per model.",
      })
      .addCallback((result) => {
        for (const { model, queued } of gauges.queueDepths()) result.observe(queued, { model });
      });
  }

  finished(model: string, protocol: string, code: Code, seconds: number): void {
    this.#requests.at(model, protocol, codeName(code)).add(1);
    this.#duration.at(model).record(seconds);
  }

  attempt(endpoint: string, code: Code, seconds: number, firstTokenSeconds: number | undefined): void {
    this.#endpointRequests.at(endpoint, codeName(code)).add(1);
    this.#endpointDuration.at(endpoint).record(seconds);
    if (firstTokenSeconds !== undefined) this.#endpointFirstToken.at(endpoint).record(firstTokenSeconds);
  }

  stage(plugin: string, seconds: number): void {
    this.#plugin.at(plugin).record(seconds);
  }

  picked(agreed: readonly string[], home: boolean): void {
    for (const scorer of agreed) this.#picks.at(scorer).add(1);
    this.#homePicks.at(home ? "true" : "false").add(1);
  }

  ejected(endpoint: string): void {
    this.#ejections.at(endpoint).add(1);
  }

  retried(model: string): void {
    this.#retries.at(model).add(1);
  }

  migration(outcome: MigrationOutcome): void {
    this.#migrations.at(outcome).add(1);
  }

  /** Every model's paths start at 0 (a fallback rate is defined before the first fallback). */
  servingPathsFor(models: readonly string[]): void {
    for (const model of models)
      for (const path of ["colocated", "disaggregated", "fallback"] as const) this.#paths.at(model, path, "");
  }

  servingPath(model: string, served: Pick<ServingPath, "path" | "reason">): void {
    this.#paths.at(model, served.path, served.reason ?? "").add(1);
  }

  cacheLookup(result: CacheResult): void {
    this.#cache.at(result).add(1);
  }

  rejected(reason: RejectionReason): void {
    this.#rejections.at(reason).add(1);
  }
}

function codeName(code: Code): string {
  return Code[code] ?? String(code);
}

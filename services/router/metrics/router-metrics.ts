// The router's metrics (Prometheus text through services/kernel/telemetry/metrics.ts): requests by
// model and status, per-endpoint attempts, in flight, latency and time to first token, picks per
// scorer and hash-home picks, time per routing plugin, ejections, retries, migrations, cache lookups,
// queue depth and admission rejections. Labels come from small sets (models, endpoints, plugins, status codes).
import type { Counter, Histogram, Meter } from "@opentelemetry/api";
import { Code } from "../../kernel/errors.ts";
import { LATENCY_BUCKETS } from "../../kernel/telemetry/metrics.ts";
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
  readonly #requests: Counter;
  readonly #duration: Histogram;
  readonly #endpointRequests: Counter;
  readonly #endpointDuration: Histogram;
  readonly #endpointFirstToken: Histogram;
  readonly #picks: Counter;
  readonly #homePicks: Counter;
  readonly #plugin: Histogram;
  readonly #ejections: Counter;
  readonly #retries: Counter;
  readonly #migrations: Counter;
  readonly #cache: Counter;
  readonly #rejections: Counter;
  readonly #paths: Counter;

  constructor(meter: Meter, gauges: Gauges) {
    const latency = { unit: "s", advice: { explicitBucketBoundaries: LATENCY_BUCKETS } };
    this.#requests = meter.createCounter("tessera_router_requests", {
      description: "Finished requests by model, front door and status.",
    });
    this.#duration = meter.createHistogram("tessera_router_request_duration_seconds", {
      description: "Request duration through the router, by model.",
      ...latency,
    });
    this.#endpointRequests = meter.createCounter("tessera_router_endpoint_requests", {
      description: "Attempts sent to each endpoint, by status.",
    });
    this.#endpointDuration = meter.createHistogram("tessera_router_endpoint_duration_seconds", {
      description: "Attempt duration per endpoint.",
      ...latency,
    });
    this.#endpointFirstToken = meter.createHistogram("tessera_router_endpoint_time_to_first_token_seconds", {
      description: "Time to first token per endpoint.",
      ...latency,
    });
    this.#picks = meter.createCounter("tessera_router_picks", {
      description: "Picks per scorer: the scorer's own best candidate was the endpoint picked.",
    });
    this.#homePicks = meter.createCounter("tessera_router_home_picks", {
      description: "Picks by whether the endpoint was the key's home on the hash ring.",
    });
    this.#plugin = meter.createHistogram("tessera_router_plugin_duration_seconds", {
      description: "Time spent in each routing plugin per request.",
      unit: "s",
      advice: { explicitBucketBoundaries: PLUGIN_BUCKETS },
    });
    this.#ejections = meter.createCounter("tessera_router_ejections", {
      description: "Endpoint ejections after consecutive failures.",
    });
    this.#retries = meter.createCounter("tessera_router_retries", {
      description: "Requests retried on another endpoint before their first token.",
    });
    this.#migrations = meter.createCounter("tessera_router_migrations", {
      description: "Streams whose endpoint failed mid-way, by what became of them.",
    });
    for (const outcome of MIGRATION_OUTCOMES) this.#migrations.add(0, { outcome });
    this.#cache = meter.createCounter("tessera_router_cache_lookups", {
      description: "Response cache lookups by result.",
    });
    this.#rejections = meter.createCounter("tessera_router_admission_rejections", {
      description: "Requests refused before routing, by reason.",
    });
    // Every reason starts at 0, so alerts and dashboards see the series before the first refusal.
    for (const reason of REJECTION_REASONS) this.#rejections.add(0, { reason });
    this.#paths = meter.createCounter("tessera_router_serving_paths", {
      description:
        "Requests served (at least in part) by how: colocated, disaggregated, fallback to one worker " +
        "(reason: why), migrated (reason: the path before), cached.",
    });
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
    this.#requests.add(1, { model, protocol, code: codeName(code) });
    this.#duration.record(seconds, { model });
  }

  attempt(endpoint: string, code: Code, seconds: number, firstTokenSeconds: number | undefined): void {
    this.#endpointRequests.add(1, { endpoint, code: codeName(code) });
    this.#endpointDuration.record(seconds, { endpoint });
    if (firstTokenSeconds !== undefined) this.#endpointFirstToken.record(firstTokenSeconds, { endpoint });
  }

  stage(plugin: string, seconds: number): void {
    this.#plugin.record(seconds, { plugin });
  }

  picked(agreed: readonly string[], home: boolean): void {
    for (const scorer of agreed) this.#picks.add(1, { scorer });
    this.#homePicks.add(1, { home: String(home) });
  }

  ejected(endpoint: string): void {
    this.#ejections.add(1, { endpoint });
  }

  retried(model: string): void {
    this.#retries.add(1, { model });
  }

  migration(outcome: MigrationOutcome): void {
    this.#migrations.add(1, { outcome });
  }

  /** Every model's paths start at 0 (a fallback rate is defined before the first fallback). */
  servingPathsFor(models: readonly string[]): void {
    for (const model of models)
      for (const path of ["colocated", "disaggregated", "fallback"] as const)
        this.#paths.add(0, { model, path, reason: "" });
  }

  servingPath(model: string, served: Pick<ServingPath, "path" | "reason">): void {
    this.#paths.add(1, { model, path: served.path, reason: served.reason ?? "" });
  }

  cacheLookup(result: CacheResult): void {
    this.#cache.add(1, { result });
  }

  rejected(reason: RejectionReason): void {
    this.#rejections.add(1, { reason });
  }
}

function codeName(code: Code): string {
  return Code[code] ?? String(code);
}

// The router's metrics (Prometheus text through services/kernel/telemetry/metrics.ts): requests by
// model and status, per-endpoint attempts, in flight, latency and time to first token, picks per
// scorer and hash-home picks, time per routing plugin, ejections, retries, migrations, cache lookups,
// queue depth and admission rejections. Labels come from small sets (models, endpoints, plugins, status codes).
// Counters and histograms are aggregated in place (kernel/telemetry/aggregated-instruments.ts): each
// series is looked up in Maps by its label values, so recording allocates nothing; ~10 are recorded
// per request. The two gauges are OpenTelemetry's, read when scraped.
import { Code } from "../../kernel/errors.ts";
import type {
  AggregatedCounter,
  AggregatedHistogram,
  CounterSeries,
  HistogramSeries,
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

/** The series of one endpoint. */
interface EndpointSeries {
  requests: Map<Code, CounterSeries>;
  duration: HistogramSeries;
  firstToken: HistogramSeries;
}

export class RouterMetrics implements RoutingObserver {
  readonly #requests: AggregatedCounter;
  readonly #duration: AggregatedHistogram;
  readonly #endpointRequests: AggregatedCounter;
  readonly #endpointDuration: AggregatedHistogram;
  readonly #endpointFirstToken: AggregatedHistogram;
  readonly #picks: AggregatedCounter;
  readonly #plugin: AggregatedHistogram;
  readonly #ejections: AggregatedCounter;
  readonly #retries: AggregatedCounter;
  readonly #migrations: AggregatedCounter;
  readonly #cache: AggregatedCounter;
  readonly #rejections: AggregatedCounter;
  readonly #paths: AggregatedCounter;

  // Series by label values: model, protocol, code; model; endpoint; plugin; scorer; home; path.
  readonly #requestSeries = new Map<string, Map<string, Map<Code, CounterSeries>>>();
  readonly #durationSeries = new Map<string, HistogramSeries>();
  readonly #endpointSeries = new Map<string, EndpointSeries>();
  readonly #pluginSeries = new Map<string, HistogramSeries>();
  readonly #pickSeries = new Map<string, CounterSeries>();
  readonly #homeSeries: readonly [CounterSeries, CounterSeries];
  readonly #pathSeries = new Map<string, CounterSeries>();
  readonly #cacheSeries = new Map<CacheResult, CounterSeries>();
  readonly #rejectionSeries = new Map<RejectionReason, CounterSeries>();

  constructor(metrics: Pick<Metrics, "meter" | "aggregated">, gauges: Gauges) {
    const instruments = metrics.aggregated("tessera.router");
    const latency = { unit: "s", boundaries: LATENCY_BUCKETS };
    this.#requests = instruments.counter("tessera_router_requests", {
      description: "Finished requests by model, front door and status.",
    });
    this.#duration = instruments.histogram("tessera_router_request_duration_seconds", {
      description: "Request duration through the router, by model.",
      ...latency,
    });
    this.#endpointRequests = instruments.counter("tessera_router_endpoint_requests", {
      description: "Attempts sent to each endpoint, by status.",
    });
    this.#endpointDuration = instruments.histogram("tessera_router_endpoint_duration_seconds", {
      description: "Attempt duration per endpoint.",
      ...latency,
    });
    this.#endpointFirstToken = instruments.histogram("tessera_router_endpoint_time_to_first_token_seconds", {
      description: "Time to first token per endpoint.",
      ...latency,
    });
    this.#picks = instruments.counter("tessera_router_picks", {
      description: "Picks per scorer: the scorer's own best candidate was the endpoint picked.",
    });
    const homePicks = instruments.counter("tessera_router_home_picks", {
      description: "Picks by whether the endpoint was the key's home on the hash ring.",
    });
    this.#homeSeries = [homePicks.series({ home: "false" }), homePicks.series({ home: "true" })];
    this.#plugin = instruments.histogram("tessera_router_plugin_duration_seconds", {
      description: "Time spent in each routing plugin per request.",
      unit: "s",
      boundaries: PLUGIN_BUCKETS,
    });
    this.#ejections = instruments.counter("tessera_router_ejections", {
      description: "Endpoint ejections after consecutive failures.",
    });
    this.#retries = instruments.counter("tessera_router_retries", {
      description: "Requests retried on another endpoint before their first token.",
    });
    this.#migrations = instruments.counter("tessera_router_migrations", {
      description: "Streams whose endpoint failed mid-way, by what became of them.",
    });
    for (const outcome of MIGRATION_OUTCOMES) this.#migrations.series({ outcome });
    this.#cache = instruments.counter("tessera_router_cache_lookups", {
      description: "Response cache lookups by result.",
    });
    this.#rejections = instruments.counter("tessera_router_admission_rejections", {
      description: "Requests refused before routing, by reason.",
    });
    // Every reason starts at 0, so alerts and dashboards see the series before the first refusal.
    for (const reason of REJECTION_REASONS)
      this.#rejectionSeries.set(reason, this.#rejections.series({ reason }));
    this.#paths = instruments.counter("tessera_router_serving_paths", {
      description:
        "Requests served (at least in part) by how: colocated, disaggregated, fallback to one worker " +
        "(reason: why), migrated (reason: the path before), cached.",
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
    let byProtocol = this.#requestSeries.get(model);
    if (byProtocol === undefined) {
      byProtocol = new Map();
      this.#requestSeries.set(model, byProtocol);
    }
    let byCode = byProtocol.get(protocol);
    if (byCode === undefined) {
      byCode = new Map();
      byProtocol.set(protocol, byCode);
    }
    let requests = byCode.get(code);
    if (requests === undefined) {
      requests = this.#requests.series({ model, protocol, code: codeName(code) });
      byCode.set(code, requests);
    }
    requests.add(1);
    let duration = this.#durationSeries.get(model);
    if (duration === undefined) {
      duration = this.#duration.series({ model });
      this.#durationSeries.set(model, duration);
    }
    duration.record(seconds);
  }

  attempt(endpoint: string, code: Code, seconds: number, firstTokenSeconds: number | undefined): void {
    let series = this.#endpointSeries.get(endpoint);
    if (series === undefined) {
      series = {
        requests: new Map(),
        duration: this.#endpointDuration.series({ endpoint }),
        firstToken: this.#endpointFirstToken.series({ endpoint }),
      };
      this.#endpointSeries.set(endpoint, series);
    }
    let requests = series.requests.get(code);
    if (requests === undefined) {
      requests = this.#endpointRequests.series({ endpoint, code: codeName(code) });
      series.requests.set(code, requests);
    }
    requests.add(1);
    series.duration.record(seconds);
    if (firstTokenSeconds !== undefined) series.firstToken.record(firstTokenSeconds);
  }

  stage(plugin: string, seconds: number): void {
    let series = this.#pluginSeries.get(plugin);
    if (series === undefined) {
      series = this.#plugin.series({ plugin });
      this.#pluginSeries.set(plugin, series);
    }
    series.record(seconds);
  }

  picked(agreed: readonly string[], home: boolean): void {
    for (const scorer of agreed) {
      let series = this.#pickSeries.get(scorer);
      if (series === undefined) {
        series = this.#picks.series({ scorer });
        this.#pickSeries.set(scorer, series);
      }
      series.add(1);
    }
    this.#homeSeries[home ? 1 : 0].add(1);
  }

  ejected(endpoint: string): void {
    this.#ejections.series({ endpoint }).add(1);
  }

  retried(model: string): void {
    this.#retries.series({ model }).add(1);
  }

  migration(outcome: MigrationOutcome): void {
    this.#migrations.series({ outcome }).add(1);
  }

  /** Every model's paths start at 0 (a fallback rate is defined before the first fallback). */
  servingPathsFor(models: readonly string[]): void {
    for (const model of models)
      for (const path of ["colocated", "disaggregated", "fallback"] as const)
        this.#pathSeriesOf(model, path, "");
  }

  servingPath(model: string, served: Pick<ServingPath, "path" | "reason">): void {
    this.#pathSeriesOf(model, served.path, served.reason ?? "").add(1);
  }

  cacheLookup(result: CacheResult): void {
    let series = this.#cacheSeries.get(result);
    if (series === undefined) {
      series = this.#cache.series({ result });
      this.#cacheSeries.set(result, series);
    }
    series.add(1);
  }

  rejected(reason: RejectionReason): void {
    this.#rejectionSeries.get(reason)?.add(1);
  }

  #pathSeriesOf(model: string, path: string, reason: string): CounterSeries {
    // Paths and reasons are short words without a NUL: the key cannot be ambiguous.
    const key = `${model}\u0000${path}\u0000${reason}`;
    let series = this.#pathSeries.get(key);
    if (series === undefined) {
      series = this.#paths.series({ model, path, reason });
      this.#pathSeries.set(key, series);
    }
    return series;
  }
}

function codeName(code: Code): string {
  return Code[code] ?? String(code);
}

// Metrics of a process through OpenTelemetry, exposed in Prometheus text format on /metrics; what is
// recorded per request can use instruments aggregated in place instead (aggregated-instruments.ts),
// read by the same exporter.
// Names are `tessera_*` and carry their unit (`_seconds`, `_tokens`, `_blocks`); counters get `_total`
// from the exporter. Label values come from small fixed sets (bounded cardinality).
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Meter } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { emptyResource, resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { AggregatedInstruments } from "./aggregated-instruments.ts";

/** Latency buckets in seconds, from 1 ms to 2 minutes. */
export const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 1.5, 2.5, 5, 10, 20, 40, 80,
  120,
];

export class Metrics {
  private readonly exporter: PrometheusExporter;
  private readonly provider: MeterProvider;
  private readonly aggregatedScopes: AggregatedInstruments[] = [];

  /** `serviceName` labels the exporter's target_info series. */
  constructor(options: { serviceName?: string } = {}) {
    const scopes = this.aggregatedScopes;
    this.exporter = new PrometheusExporter({
      preventServerStart: true,
      withoutScopeInfo: true,
      metricProducers: [
        {
          collect: async () => ({
            resourceMetrics: {
              resource: emptyResource(),
              scopeMetrics: (await Promise.all(scopes.map((scope) => scope.collect()))).flatMap(
                (result) => result.resourceMetrics.scopeMetrics,
              ),
            },
            errors: [],
          }),
        },
      ],
    });
    this.provider = new MeterProvider({
      readers: [this.exporter],
      resource: resourceFromAttributes({ "service.name": options.serviceName ?? "tessera" }),
    });
  }

  meter(name: string): Meter {
    return this.provider.getMeter(name);
  }

  /** Instruments for per-request records (aggregated-instruments.ts), exported beside the meters'. */
  aggregated(scope: string): AggregatedInstruments {
    const instruments = new AggregatedInstruments(scope);
    this.aggregatedScopes.push(instruments);
    return instruments;
  }

  /** Serves GET /metrics on its own port (0 = any free port); resolves once listening. */
  async serve(port: number, host = "0.0.0.0"): Promise<http.Server> {
    const server = http.createServer((req, res) => {
      if (req.method === "GET" && req.url?.split("?")[0] === "/metrics") {
        this.exporter.getMetricsRequestHandler(req, res);
        return;
      }
      res.statusCode = 404;
      res.end("not found: metrics are served at /metrics\n");
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    return server;
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}

export function listeningPort(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}

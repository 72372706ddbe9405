// Metrics of the Inference service: calls by method and status, calls in flight, tokens streamed,
// time to first token and call duration. Exposed on /metrics when `tessera serve --metrics-port` is set.
import type { Counter, Histogram, Meter } from "@opentelemetry/api";
import { Code } from "../../kernel/errors.ts";
import { LATENCY_BUCKETS } from "../../kernel/telemetry/metrics.ts";

export class RpcMetrics {
  readonly #calls: Counter;
  readonly #tokens: Counter;
  readonly #duration: Histogram;
  readonly #firstToken: Histogram;

  constructor(meter: Meter, inFlight: () => number) {
    const latency = { unit: "s", advice: { explicitBucketBoundaries: LATENCY_BUCKETS } };
    this.#calls = meter.createCounter("tessera_rpc_calls", {
      description: "Finished calls by method and status.",
    });
    this.#tokens = meter.createCounter("tessera_rpc_generated_tokens", { description: "Tokens streamed." });
    this.#duration = meter.createHistogram("tessera_rpc_duration_seconds", {
      description: "Call duration by method.",
      ...latency,
    });
    this.#firstToken = meter.createHistogram("tessera_rpc_time_to_first_token_seconds", {
      description: "Time from a Generate call's start to its first token.",
      ...latency,
    });
    meter
      .createObservableGauge("tessera_rpc_calls_in_flight", { description: "Calls being served." })
      .addCallback((result) => result.observe(inFlight()));
  }

  finished(method: string, code: Code, seconds: number): void {
    this.#calls.add(1, { method, code: Code[code] ?? String(code) });
    this.#duration.record(seconds, { method });
  }

  firstToken(seconds: number): void {
    this.#firstToken.record(seconds);
  }

  tokens(count: number): void {
    this.#tokens.add(count);
  }
}

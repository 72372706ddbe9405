// Starts distributed tracing of one process (tracing.ts says what every module sees of it): a tracer
// provider with an exporter (OTLP over HTTP, or one a test hands in), W3C trace context as the
// propagator (the `traceparent` header or gRPC metadata entry), and an AsyncLocalStorage context manager,
// all registered as the process's globals so every module reaches them through @opentelemetry/api.
// Imported only where tracing is configured (cli/tracing-options.ts): the OTLP exporter and the
// protobuf code under it cost `tessera serve` about 5 MiB of heap otherwise (issue 18).
import { context, propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { AsyncContextManager } from "./async-context.ts";
import { setTracingActive, type Tracing, tracingEnabled } from "./tracing.ts";
import { type TracingConfig, tracesUrl } from "./tracing-config.ts";

const disabled: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };

/**
 * Starts tracing when the config names an OTLP endpoint or `options.exporter` is given (tests: an
 * in-memory exporter, exported span by span). One tracing per process at a time.
 */
export function startTracing(config: TracingConfig, options: { exporter?: SpanExporter } = {}): Tracing {
  const exporter =
    options.exporter ??
    (config.otlpEndpoint === undefined
      ? undefined
      : new OTLPTraceExporter({ url: tracesUrl(config.otlpEndpoint) }));
  if (!exporter) return disabled;
  if (tracingEnabled()) throw new Error("tracing is already started in this process");
  const processor = options.exporter
    ? new SimpleSpanProcessor({ exporter })
    : new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.exportDelayMs });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": config.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [processor],
  });
  const contextManager = new AsyncContextManager();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingActive(true);
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () => {
      stopped ??= (async () => {
        await provider.shutdown();
        trace.disable();
        propagation.disable();
        context.disable();
        setTracingActive(false);
      })();
      return stopped;
    },
  };
}

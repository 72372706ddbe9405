// Distributed tracing of one process through OpenTelemetry: a tracer provider with an exporter (OTLP
// over HTTP, or one a test hands in), W3C trace context as the propagator (the `traceparent` header
// or gRPC metadata entry), and an AsyncLocalStorage context manager, all registered as the process's
// globals so every module reaches them through @opentelemetry/api. Off by default: without an
// exporter nothing is registered and every span is the API's no-op span.
import { context, propagation, type Tracer, trace } from "@opentelemetry/api";
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
import { type TracingConfig, tracesUrl } from "./tracing-config.ts";

export const TRACER_NAME = "tessera";

/** Span attribute with the request id the router gave a request (also in every log line of it). */
export const REQUEST_ID_ATTRIBUTE = "tessera.request_id";

export interface Tracing {
  readonly enabled: boolean;
  /** Sends the spans still buffered. */
  flush(): Promise<void>;
  /** Flushes, then unregisters the globals. */
  shutdown(): Promise<void>;
}

let active = false;

/** Whether a process-wide tracer provider is registered (interceptors are only added then). */
export function tracingEnabled(): boolean {
  return active;
}

/** The tracer of Tessera's spans (a no-op tracer while tracing is off). */
export function tesseraTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

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
  if (active) throw new Error("tracing is already started in this process");
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
  active = true;
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
        active = false;
      })();
      return stopped;
    },
  };
}

// Distributed tracing of one process through OpenTelemetry, as every module reaches it: the tracer of
// Tessera's spans and whether tracing is on. Starting it (an exporter, a tracer provider, the W3C
// propagator and a context manager registered as the process's globals) is tracing-start.ts, imported
// only by a process that traces, so that a process without an OTLP endpoint never loads the exporter
// and the protobuf code under it (issue 18: `tessera serve`'s resident set). Off by default: without
// an exporter nothing is registered and every span is the API's no-op span.
import { type Tracer, trace } from "@opentelemetry/api";

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

/** Set by startTracing and its shutdown (tracing-start.ts) only. */
export function setTracingActive(on: boolean): void {
  active = on;
}

/** Whether a process-wide tracer provider is registered (interceptors are only added then). */
export function tracingEnabled(): boolean {
  return active;
}

/** The tracer of Tessera's spans (a no-op tracer while tracing is off). */
export function tesseraTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

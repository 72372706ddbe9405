// W3C trace context in gRPC metadata (`traceparent`, `tracestate`), both ways:
// - tracingInterceptor: a grpc-js client interceptor. A call made inside a traced request gets a
//   CLIENT span (child of the active span) whose context travels in the call's metadata; the request
//   id of a message that carries one is put on the span and on the request's span. Calls made outside
//   any trace (load polls, health checks) pass untouched.
// - traceHandlers: wraps a service's server handlers. Each call runs inside a SERVER span, child of
//   the context its metadata carries, that ends with the call's status.
// - startClientSpan / startServerSpan: the same spans for a generation on a tessera.v1.Relay stream,
//   whose trace context travels in its RelayOpen instead of a call's metadata.
import {
  InterceptingCall,
  type Interceptor,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  type StatusObject,
} from "@grpc/grpc-js";
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from "@opentelemetry/api";
import { Code } from "../kernel/errors.ts";
import { REQUEST_ID_ATTRIBUTE, tesseraTracer } from "../kernel/telemetry/tracing.ts";

export const metadataSetter: TextMapSetter<Metadata> = {
  set: (metadata, key, value) => metadata.set(key, value),
};

export const metadataGetter: TextMapGetter<Metadata> = {
  keys: (metadata) => Object.keys(metadata.getMap()),
  get: (metadata, key) => {
    const values = metadata.get(key).map(String);
    return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
  },
};

/** The trace context a call's metadata carries (the root context when none). */
export function extractFromMetadata(metadata: Metadata): Context {
  return propagation.extract(ROOT_CONTEXT, metadata, metadataGetter);
}

/** Metadata carrying `ctx`'s trace context, for a call made by hand. */
export function metadataWithTrace(ctx: Context = context.active(), metadata = new Metadata()): Metadata {
  propagation.inject(ctx, metadata, metadataSetter);
  return metadata;
}

function rpcAttributes(path: string) {
  const [, service = "", method = ""] = path.split("/");
  return { "rpc.system": "grpc", "rpc.service": service, "rpc.method": method };
}

function requestIdOf(message: unknown): string | undefined {
  const id = (message as { requestId?: unknown } | null)?.requestId;
  return typeof id === "string" && id !== "" ? id : undefined;
}

function endWithStatus(span: Span, code: number, message?: string): void {
  span.setAttribute("rpc.grpc.status_code", code);
  if (code !== Code.OK) span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
  span.end();
}

/** A traced call's span: the context to run its work in, its context to send along, and its end. */
export interface TracedCall {
  /** The context with the span active. */
  context: Context;
  /** The trace context to send along with the call (W3C traceparent / tracestate). */
  carrier: Record<string, string>;
  /** Tags the span (and a CLIENT span's parent, the request's span) with the request id. */
  tagRequest(requestId: string | undefined): void;
  /** Ends the span with the call's status; later ends are ignored. */
  end(code: number, message?: string): void;
}

function tracedCall(span: Span, parent: Context, parentSpan?: Span): TracedCall {
  const ctx = trace.setSpan(parent, span);
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  let ended = false;
  return {
    context: ctx,
    carrier,
    tagRequest: (requestId) => {
      if (!requestId) return;
      span.setAttribute(REQUEST_ID_ATTRIBUTE, requestId);
      parentSpan?.setAttribute(REQUEST_ID_ATTRIBUTE, requestId);
    },
    end: (code, message) => {
      if (ended) return;
      ended = true;
      endWithStatus(span, code, message);
    },
  };
}

/**
 * The CLIENT span of a call to `path` (e.g. `/tessera.v1.Inference/Generate`), named after it and a
 * child of the active span; undefined outside a recorded trace (the call then carries no context).
 * tracingInterceptor makes one per grpc-js call; a generation opened on a tessera.v1.Relay stream,
 * which no interceptor sees, makes its own and sends the carrier in its RelayOpen.
 */
export function startClientSpan(path: string, requestId: string | undefined): TracedCall | undefined {
  const parent = context.active();
  const parentSpan = trace.getSpan(parent);
  if (!parentSpan?.isRecording()) return undefined;
  const span = tesseraTracer().startSpan(
    path.slice(1),
    { kind: SpanKind.CLIENT, attributes: rpcAttributes(path) },
    parent,
  );
  const call = tracedCall(span, parent, parentSpan);
  call.tagRequest(requestId);
  return call;
}

/**
 * The SERVER span of a received call to `path`, named `${prefix} ${path without its slash}`: a child
 * of `parent` (the context the call carried; the root context for none). traceHandlers makes one per
 * grpc-js call; a Relay generation makes its own from the carrier of its RelayOpen.
 */
export function startServerSpan(
  prefix: string,
  path: string,
  parent: Context,
  requestId: string | undefined,
): TracedCall {
  const span = tesseraTracer().startSpan(
    `${prefix} ${path.slice(1)}`,
    { kind: SpanKind.SERVER, attributes: rpcAttributes(path) },
    parent,
  );
  const call = tracedCall(span, parent);
  call.tagRequest(requestId);
  return call;
}

/** The trace context a carrier holds (the root context when none). */
export function extractFromCarrier(carrier: Record<string, string>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

export const tracingInterceptor: Interceptor = (options: InterceptorOptions, nextCall: NextCall) => {
  const traced = startClientSpan(options.method_definition.path, undefined);
  if (!traced) return new InterceptingCall(nextCall(options));
  return new InterceptingCall(nextCall(options), {
    start: (metadata, _listener, next) => {
      for (const [key, value] of Object.entries(traced.carrier)) metadata.set(key, value);
      next(metadata, {
        onReceiveStatus: (status: StatusObject, nextStatus) => {
          traced.end(status.code, status.details);
          nextStatus(status);
        },
      });
    },
    sendMessage: (message, next) => {
      traced.tagRequest(requestIdOf(message));
      next(message);
    },
  });
};

interface ServerCall {
  metadata: Metadata;
  request?: unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
}

/**
 * Runs the handlers of `methods` (local names, e.g. "generate") inside a SERVER span named
 * `${prefix} ${service}/${Method}`; the others (polled metadata calls) stay untraced. A streaming
 * call's span ends when the call finishes, is cancelled or fails; a unary call's when it answers.
 * Without tracing the handlers are returned as they are.
 */
export function traceHandlers<H extends object>(
  service: string,
  handlers: H,
  options: { enabled: boolean; prefix: string; methods: readonly (keyof H & string)[] },
): H {
  if (!options.enabled) return handlers;
  const traced: Record<string, unknown> = { ...(handlers as Record<string, unknown>) };
  for (const [name, handler] of Object.entries(handlers)) {
    if (!options.methods.includes(name as keyof H & string)) continue;
    const path = `/${service}/${name.charAt(0).toUpperCase()}${name.slice(1)}`;
    traced[name] = (call: ServerCall, callback?: (err: unknown, value?: unknown) => void) => {
      const served = startServerSpan(
        options.prefix,
        path,
        extractFromMetadata(call.metadata),
        requestIdOf(call.request),
      );
      const run = (...args: unknown[]) =>
        context.with(served.context, () => (handler as (...a: unknown[]) => unknown)(...args));
      if (callback) {
        return run(call, (err: unknown, value?: unknown) => {
          const status = err as { code?: number; details?: string } | null;
          served.end(status ? (status.code ?? Code.UNKNOWN) : Code.OK, status?.details);
          callback(err, value);
        });
      }
      call.once("finish", () => served.end(Code.OK));
      call.once("cancelled", () => served.end(Code.CANCELLED));
      call.once("error", (err) => {
        const status = err as { code?: number; details?: string };
        served.end(status.code ?? Code.UNKNOWN, status.details);
      });
      return run(call);
    };
  }
  return traced as H;
}

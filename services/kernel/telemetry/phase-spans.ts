// Spans for the timed phases of one request inside a worker (queueing, prefill, KV transfer, decode),
// recorded after the fact from the times the engine keeps, as children of the span that was active
// when the request arrived (the worker's Generate span). The engine sees only `RequestPhases`, so it
// does not depend on OpenTelemetry; it never waits on it.
import { type Attributes, type Context, context, trace } from "@opentelemetry/api";
import { REQUEST_ID_ATTRIBUTE, tesseraTracer } from "./tracing.ts";

export type PhaseName = "queue" | "prefill" | "decode" | "kv_transfer.read" | "kv_transfer.write";

export interface RequestPhases {
  /** Records one phase from `startMs` to `endMs` (milliseconds since the epoch). */
  phase(name: PhaseName, startMs: number, endMs: number, attributes?: Attributes): void;
}

/** Phases as child spans of `parent`'s span; undefined when that span is not being recorded. */
export function phaseSpans(requestId: string, parent: Context = context.active()): RequestPhases | undefined {
  if (!trace.getSpan(parent)?.isRecording()) return undefined;
  return {
    phase: (name, startMs, endMs, attributes = {}) => {
      tesseraTracer()
        .startSpan(
          name,
          { startTime: startMs, attributes: { [REQUEST_ID_ATTRIBUTE]: requestId, ...attributes } },
          parent,
        )
        .end(Math.max(startMs, endMs));
    },
  };
}

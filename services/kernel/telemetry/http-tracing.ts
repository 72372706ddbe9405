// A SERVER span around each POST an HTTP server answers (the OpenAI-compatible front door), child of
// the `traceparent` header's context; probes and metrics (GET) are not traced.
import type { IncomingMessage, ServerResponse } from "node:http";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { tesseraTracer } from "./tracing.ts";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function traceHttpListener(
  listener: Listener,
  options: { enabled: boolean; prefix: string },
): Listener {
  if (!options.enabled) return listener;
  return (req, res) => {
    if (req.method !== "POST") return listener(req, res);
    const route = (req.url ?? "/").split("?")[0] ?? "/";
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tesseraTracer().startSpan(
      `${options.prefix} ${req.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method, "url.path": route } },
      parent,
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      span.setAttribute("http.response.status_code", res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once("finish", end);
    res.once("close", end);
    context.with(trace.setSpan(parent, span), () => listener(req, res));
  };
}

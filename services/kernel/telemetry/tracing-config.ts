// Tracing settings of one process, validated at start-up. Off unless an OTLP endpoint is given: then
// spans go to `${otlpEndpoint}/v1/traces` (OTLP over HTTP, JSON), as OTEL_EXPORTER_OTLP_ENDPOINT
// means for every OpenTelemetry SDK; an endpoint that already names a path is used as it is.
import { z } from "zod";
import { type Result, TesseraError } from "../errors.ts";

export const tracingConfigSchema = z.strictObject({
  /** Base URL of an OTLP/HTTP receiver (a collector, Jaeger, Tempo ...); unset: tracing off. */
  otlpEndpoint: z.url({ protocol: /^https?$/ }).optional(),
  /** The service.name of every span (tessera-router, tessera-worker ...). */
  serviceName: z.string().min(1),
  /** Fraction of new traces kept (a request that arrives with a sampled trace context is always kept). */
  sampleRatio: z.number().min(0).max(1).default(1),
  /** Spans are sent in batches at least this often. */
  exportDelayMs: z.int().min(1).default(1_000),
});

export type TracingConfig = z.infer<typeof tracingConfigSchema>;
export type TracingConfigInput = z.input<typeof tracingConfigSchema>;

export function parseTracingConfig(raw: unknown): Result<TracingConfig> {
  const parsed = tracingConfigSchema.safeParse(raw);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    error: TesseraError.invalidArgument(issue?.path.join(".") || "tracing", issue?.message ?? "invalid"),
  };
}

/** The URL spans are posted to. */
export function tracesUrl(otlpEndpoint: string): string {
  const url = new URL(otlpEndpoint);
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/v1/traces";
  return url.toString();
}

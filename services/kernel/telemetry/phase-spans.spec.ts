import assert from "node:assert/strict";
import { context, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { phaseSpans } from "./phase-spans.ts";
import { REQUEST_ID_ATTRIBUTE, tesseraTracer } from "./tracing.ts";
import { startTracing } from "./tracing-start.ts";

describe("phaseSpans", () => {
  it("records phases after the fact as children of the request's span, with the request id", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: "t", sampleRatio: 1, exportDelayMs: 1_000 }, { exporter });
    try {
      assert.equal(phaseSpans("r1", ROOT_CONTEXT), undefined, "nothing to record outside a trace");
      const request = tesseraTracer().startSpan("Generate");
      const phases = context.with(trace.setSpan(ROOT_CONTEXT, request), () => phaseSpans("r1"));
      phases?.phase("queue", 1_700_000_000_000, 1_700_000_000_005);
      phases?.phase("prefill", 1_700_000_000_005, 1_700_000_000_004, { "tessera.prompt_tokens": 7 });
      request.end();
      const [queue, prefill] = exporter.getFinishedSpans();
      assert.equal(queue?.name, "queue");
      assert.equal(queue?.parentSpanContext?.spanId, request.spanContext().spanId);
      assert.equal(queue?.attributes[REQUEST_ID_ATTRIBUTE], "r1");
      assert.deepEqual(queue?.startTime, [1_700_000_000, 0]);
      assert.deepEqual(queue?.endTime, [1_700_000_000, 5_000_000]);
      assert.deepEqual(prefill?.endTime, prefill?.startTime, "an end before the start is clamped");
      assert.equal(prefill?.attributes["tessera.prompt_tokens"], 7);
    } finally {
      await tracing.shutdown();
    }
  });
});

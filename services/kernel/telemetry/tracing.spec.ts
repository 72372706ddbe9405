import assert from "node:assert/strict";
import { context, trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { tesseraTracer, tracingEnabled } from "./tracing.ts";
import { startTracing } from "./tracing-start.ts";

describe("startTracing", () => {
  it("is off without an OTLP endpoint: nothing registered, spans are no-ops", async () => {
    const tracing = startTracing({ serviceName: "t", sampleRatio: 1, exportDelayMs: 1_000 });
    assert.equal(tracing.enabled, false);
    assert.equal(tracingEnabled(), false);
    assert.equal(tesseraTracer().startSpan("x").isRecording(), false);
    await tracing.shutdown();
  });

  it("exports spans with the service name, carries the active span across awaits, and unregisters", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing(
      { serviceName: "tessera-test", sampleRatio: 1, exportDelayMs: 1_000 },
      { exporter },
    );
    assert.equal(tracingEnabled(), true);
    assert.throws(() =>
      startTracing({ serviceName: "again", sampleRatio: 1, exportDelayMs: 1 }, { exporter }),
    );
    const parent = tesseraTracer().startSpan("parent");
    await context.with(trace.setSpan(context.active(), parent), async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      tesseraTracer().startSpan("child").end();
    });
    parent.end();
    const [child, root] = exporter.getFinishedSpans();
    await tracing.shutdown();
    assert.equal(tracingEnabled(), false);
    assert.equal(child?.name, "child");
    assert.equal(child?.parentSpanContext?.spanId, root?.spanContext().spanId);
    assert.equal(root?.resource.attributes["service.name"], "tessera-test");
    assert.equal(tesseraTracer().startSpan("after").isRecording(), false);
  });

  it("keeps a ratio of new traces (none at 0)", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: "t", sampleRatio: 0, exportDelayMs: 1_000 }, { exporter });
    tesseraTracer().startSpan("dropped").end();
    assert.equal(exporter.getFinishedSpans().length, 0);
    await tracing.shutdown();
  });
});

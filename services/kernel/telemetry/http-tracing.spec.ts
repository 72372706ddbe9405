import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { traceHttpListener } from "./http-tracing.ts";
import { tesseraTracer } from "./tracing.ts";
import { startTracing } from "./tracing-start.ts";

describe("traceHttpListener", () => {
  it("answers each POST inside a SERVER span, child of the traceparent header; GETs are not traced", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: "t", sampleRatio: 1, exportDelayMs: 1_000 }, { exporter });
    const server = http.createServer(
      traceHttpListener(
        (req, res) => {
          tesseraTracer().startSpan("inside").end();
          res.statusCode = req.url === "/fail" ? 503 : 200;
          res.end();
        },
        { enabled: true, prefix: "router" },
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
      const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
      await fetch(`${url}/v1/completions?x=1`, { method: "POST", headers: { traceparent }, body: "{}" });
      await fetch(`${url}/fail`, { method: "POST", body: "{}" });
      await fetch(`${url}/health`);
      const spans = exporter.getFinishedSpans();
      const names = spans.map((s) => s.name).filter((n) => n.startsWith("router"));
      assert.deepEqual(names.sort(), ["router POST /fail", "router POST /v1/completions"]);
      const inside = spans.filter((s) => s.name === "inside").map((s) => s.parentSpanContext?.spanId);
      assert.equal(inside.filter((parent) => parent === undefined).length, 1, "the GET ran outside any span");
      const completions = spans.find((s) => s.name === "router POST /v1/completions");
      assert.equal(completions?.kind, SpanKind.SERVER);
      assert.equal(completions?.spanContext().traceId, traceId);
      assert.equal(completions?.parentSpanContext?.spanId, "00f067aa0ba902b7");
      assert.equal(completions?.attributes["http.response.status_code"], 200);
      assert.equal(spans.find((s) => s.name === "router POST /fail")?.status.code, 2);
    } finally {
      server.close();
      await tracing.shutdown();
    }
  });
});

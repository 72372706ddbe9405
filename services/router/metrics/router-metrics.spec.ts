import assert from "node:assert/strict";
import { Code } from "../../kernel/errors.ts";
import { Metrics } from "../../kernel/telemetry/metrics.ts";
import { scrape } from "../../kernel/telemetry/testing/scrape.ts";
import { RouterMetrics } from "./router-metrics.ts";

describe("RouterMetrics", () => {
  it("exports admission rejections of every reason from 0, and counts them", async () => {
    const metrics = new Metrics();
    const router = new RouterMetrics(metrics, {
      endpointsInFlight: () => [{ endpoint: "w0", inFlight: 1 }],
      queueDepths: () => [],
    });
    router.rejected("queue_full");
    router.finished("tiny", "http", Code.INVALID_ARGUMENT, 0.01);
    try {
      const text = await scrape(metrics);
      for (const reason of ["unauthenticated", "invalid", "rate_limited", "unavailable"])
        assert.match(
          text,
          new RegExp(`^tessera_router_admission_rejections_total\\{reason="${reason}"\\} 0$`, "m"),
        );
      assert.match(text, /^tessera_router_admission_rejections_total\{reason="queue_full"\} 1$/m);
      assert.match(
        text,
        /^tessera_router_requests_total\{model="tiny",protocol="http",code="INVALID_ARGUMENT"\} 1$/m,
      );
      assert.match(text, /^tessera_router_endpoint_in_flight\{endpoint="w0"\} 1$/m);
    } finally {
      await metrics.shutdown();
    }
  });
});

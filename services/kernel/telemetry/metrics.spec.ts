import assert from "node:assert/strict";
import { LATENCY_BUCKETS, listeningPort, Metrics } from "./metrics.ts";

describe("Metrics", () => {
  it("serves counters, gauges and histograms in Prometheus text on /metrics", async () => {
    const metrics = new Metrics();
    const meter = metrics.meter("test");
    meter.createCounter("tessera_test_requests", { description: "Requests." }).add(3, { outcome: "ok" });
    meter
      .createHistogram("tessera_test_latency_seconds", {
        unit: "s",
        advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
      })
      .record(0.02);
    meter.createObservableGauge("tessera_test_running_requests").addCallback((r) => r.observe(7));
    const server = await metrics.serve(0, "127.0.0.1");
    try {
      const text = await (await fetch(`http://127.0.0.1:${listeningPort(server)}/metrics`)).text();
      assert.match(text, /^tessera_test_requests_total\{outcome="ok"\} 3$/m);
      assert.match(text, /^tessera_test_latency_seconds_bucket\{le="0.025"\} 1$/m);
      assert.match(text, /^tessera_test_running_requests 7$/m);
      assert.equal((await fetch(`http://127.0.0.1:${listeningPort(server)}/other`)).status, 404);
    } finally {
      server.close();
      await metrics.shutdown();
    }
  });
});

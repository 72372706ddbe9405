import assert from "node:assert/strict";
import { Metrics } from "./metrics.ts";
import { scrape } from "./testing/scrape.ts";

/** The exposition's lines of one metric, with its name replaced by `x` (HELP and TYPE included). */
function linesOf(text: string, name: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.includes(`${name}_`) || line.includes(`${name} `) || line.includes(`${name}{`))
    .map((line) => line.replaceAll(name, "x"));
}

describe("AggregatedInstruments", () => {
  const boundaries = [0.001, 0.01, 0.1, 1];
  const values = [0.0005, 0.001, 0.003, 0.05, 0.05, 0.7, 3, 12];

  it("exports a histogram's series as OpenTelemetry's own histogram does, bucket for bucket", async () => {
    const metrics = new Metrics();
    try {
      const ours = metrics
        .aggregated("spec")
        .histogram("ours_seconds", { description: "d", unit: "s", boundaries });
      const theirs = metrics.meter("spec").createHistogram("theirs_seconds", {
        description: "d",
        unit: "s",
        advice: { explicitBucketBoundaries: boundaries },
      });
      const a = ours.series({ plugin: "hash" });
      const b = ours.series({ plugin: "load" });
      for (const v of values) {
        a.record(v);
        theirs.record(v, { plugin: "hash" });
      }
      b.record(0.02);
      theirs.record(0.02, { plugin: "load" });
      const text = await scrape(metrics);
      assert.deepEqual(linesOf(text, "ours_seconds"), linesOf(text, "theirs_seconds"));
      assert.match(text, /^ours_seconds_bucket\{plugin="hash",le="0.01"\} 3$/m);
      assert.match(text, /^ours_seconds_bucket\{plugin="hash",le="\+Inf"\} 8$/m);
      assert.match(text, /^ours_seconds_count\{plugin="load"\} 1$/m);
    } finally {
      await metrics.shutdown();
    }
  });

  it("exports a counter's series as a Prometheus counter, from 0 once asked for", async () => {
    const metrics = new Metrics();
    try {
      const instruments = metrics.aggregated("spec");
      const ours = instruments.counter("ours_requests", { description: "d" });
      const theirs = metrics.meter("spec").createCounter("theirs_requests", { description: "d" });
      ours.series({ code: "OK" }).add(2);
      ours.series({ code: "OK" }).add(1);
      ours.series({ code: "CANCELLED" });
      theirs.add(3, { code: "OK" });
      theirs.add(0, { code: "CANCELLED" });
      const text = await scrape(metrics);
      assert.deepEqual(linesOf(text, "ours_requests"), linesOf(text, "theirs_requests"));
      assert.match(text, /^ours_requests_total\{code="OK"\} 3$/m);
      assert.match(text, /^ours_requests_total\{code="CANCELLED"\} 0$/m);
    } finally {
      await metrics.shutdown();
    }
  });

  it("hands out one series per set of label values, whatever their order", () => {
    const metrics = new Metrics();
    const counter = metrics.aggregated("spec").counter("c", { description: "d" });
    assert.equal(counter.series({ a: "1", b: "2" }), counter.series({ b: "2", a: "1" }));
    assert.notEqual(counter.series({ a: "1", b: "2" }), counter.series({ a: "1", b: "3" }));
  });

  it("finds a series by its label values in the declared order (at)", () => {
    const metrics = new Metrics();
    const counter = metrics.aggregated("spec").counter("c", { description: "d", labels: ["b", "a"] });
    assert.equal(counter.at("2", "1"), counter.series({ a: "1", b: "2" }));
    assert.equal(counter.at("2", "1"), counter.at("2", "1"));
    assert.notEqual(counter.at("2", "1"), counter.at("1", "2"));
    assert.throws(
      () => metrics.aggregated("spec").counter("x", { description: "d", labels: ["a", "b", "c", "d"] }),
      /more than three labels/,
    );
  });
});

import assert from "node:assert/strict";
import { parseTracingConfig, tracesUrl } from "./tracing-config.ts";

describe("tracing config", () => {
  it("is off without an endpoint, samples everything and exports every second by default", () => {
    assert.deepEqual(parseTracingConfig({ serviceName: "tessera-worker" }).value, {
      serviceName: "tessera-worker",
      sampleRatio: 1,
      exportDelayMs: 1_000,
    });
  });

  it("names the bad field", () => {
    assert.match(
      parseTracingConfig({ serviceName: "x", otlpEndpoint: "grpc://collector:4317" }).error?.message ?? "",
      /^otlpEndpoint: /,
    );
    assert.match(
      parseTracingConfig({ serviceName: "x", sampleRatio: 2 }).error?.message ?? "",
      /^sampleRatio: /,
    );
  });

  it("posts to /v1/traces under a base endpoint, or to the URL given with a path", () => {
    assert.equal(tracesUrl("http://collector:4318"), "http://collector:4318/v1/traces");
    assert.equal(tracesUrl("http://collector:4318/"), "http://collector:4318/v1/traces");
    assert.equal(tracesUrl("https://tempo/otlp/v1/traces"), "https://tempo/otlp/v1/traces");
  });
});

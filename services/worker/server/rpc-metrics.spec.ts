import assert from "node:assert/strict";
import { Code } from "../../kernel/errors.ts";
import { listeningPort, Metrics } from "../../kernel/telemetry/metrics.ts";
import { RpcMetrics } from "./rpc-metrics.ts";

describe("RpcMetrics", () => {
  it("exports calls by method and status, tokens, latencies and calls in flight", async () => {
    const metrics = new Metrics();
    const rpc = new RpcMetrics(metrics.meter("test"), () => 2);
    rpc.finished("Generate", Code.OK, 0.3);
    rpc.finished("Generate", Code.INVALID_ARGUMENT, 0.001);
    rpc.firstToken(0.02);
    rpc.tokens(5);
    const server = await metrics.serve(0, "127.0.0.1");
    try {
      const text = await (await fetch(`http://127.0.0.1:${listeningPort(server)}/metrics`)).text();
      assert.match(text, /^tessera_rpc_calls_total\{method="Generate",code="OK"\} 1$/m);
      assert.match(text, /^tessera_rpc_calls_total\{method="Generate",code="INVALID_ARGUMENT"\} 1$/m);
      assert.match(text, /^tessera_rpc_generated_tokens_total 5$/m);
      assert.match(text, /^tessera_rpc_time_to_first_token_seconds_count 1$/m);
      assert.match(text, /^tessera_rpc_duration_seconds_count\{method="Generate"\} 2$/m);
      assert.match(text, /^tessera_rpc_calls_in_flight 2$/m);
    } finally {
      server.close();
      await metrics.shutdown();
    }
  });
});

import assert from "node:assert/strict";
import { Code } from "../../kernel/errors.ts";
import { listeningPort, Metrics } from "../../kernel/telemetry/metrics.ts";
import { KvTransferMetrics } from "./kv-transfer-metrics.ts";

describe("KvTransferMetrics", () => {
  it("exports blocks by result, bytes, failed operations and latencies, and keeps the same counts", async () => {
    const metrics = new Metrics();
    const kv = new KvTransferMetrics(metrics.meter("test"), { model: "tiny" });
    kv.blocks("get", "hit", 3);
    kv.blocks("get", "checksum_failure");
    kv.blocks("get", "miss", 0);
    kv.bytes("in", 1024);
    kv.bytes("out", 2048);
    kv.failed("put", Code.UNAVAILABLE);
    kv.duration("get", 0.004);
    const server = await metrics.serve(0, "127.0.0.1");
    try {
      const text = await (await fetch(`http://127.0.0.1:${listeningPort(server)}/metrics`)).text();
      assert.match(text, /^tessera_kv_transfer_blocks_total\{model="tiny",op="get",result="hit"\} 3$/m);
      assert.match(
        text,
        /^tessera_kv_transfer_blocks_total\{model="tiny",op="get",result="checksum_failure"\} 1$/m,
      );
      assert.match(text, /^tessera_kv_transfer_bytes_total\{model="tiny",direction="in"\} 1024$/m);
      assert.match(
        text,
        /^tessera_kv_transfer_failed_operations_total\{model="tiny",op="put",code="UNAVAILABLE"\} 1$/m,
      );
      assert.match(text, /^tessera_kv_transfer_duration_seconds_count\{model="tiny",op="get"\} 1$/m);
      // Results not seen yet are exported as 0 from the start.
      assert.match(text, /^tessera_kv_transfer_blocks_total\{model="tiny",op="get",result="mismatch"\} 0$/m);
      assert.match(text, /^tessera_kv_transfer_blocks_total\{model="tiny",op="put",result="error"\} 0$/m);
    } finally {
      server.close();
      await metrics.shutdown();
    }
    assert.deepEqual(kv.snapshot(), {
      blocks: { "get.hit": 3, "get.checksum_failure": 1 },
      bytesIn: 1024,
      bytesOut: 2048,
      failures: { "put.UNAVAILABLE": 1 },
    });
  });
});

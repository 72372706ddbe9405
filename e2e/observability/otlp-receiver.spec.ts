import assert from "node:assert/strict";
import { flattenExport, startOtlpReceiver } from "./otlp-receiver.ts";

describe("OTLP/HTTP receiver (test helper)", () => {
  it("flattens an export with hex or base64 ids and typed attributes", () => {
    const [span] = flattenExport({
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "tessera-worker" } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.from("4bf92f3577b34da6a3ce929d0e0e4736", "hex").toString("base64"),
                  spanId: "00f067aa0ba902b7",
                  name: "queue",
                  kind: 1,
                  startTimeUnixNano: "1700000000000000000",
                  endTimeUnixNano: "1700000000005000000",
                  attributes: [
                    { key: "tessera.request_id", value: { stringValue: "r1" } },
                    { key: "tessera.kv.blocks", value: { intValue: "4" } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    assert.deepEqual(span, {
      service: "tessera-worker",
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      parentSpanId: undefined,
      name: "queue",
      kind: 1,
      startNs: 1700000000000000000n,
      endNs: 1700000000005000000n,
      attributes: { "tessera.request_id": "r1", "tessera.kv.blocks": 4 },
    });
  });

  it("accepts JSON posts to /v1/traces and refuses anything else", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const post = (url: string, type: string) =>
        fetch(`${receiver.endpoint}${url}`, {
          method: "POST",
          headers: { "content-type": type },
          body: "{}",
        });
      assert.equal((await post("/v1/traces", "application/json")).status, 200);
      assert.equal((await post("/v1/traces", "application/x-protobuf")).status, 415);
      assert.equal((await post("/v1/metrics", "application/json")).status, 404);
    } finally {
      await receiver.close();
    }
  });
});

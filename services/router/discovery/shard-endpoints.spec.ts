import assert from "node:assert/strict";
import type { Shard } from "../../api/inference-model-status.ts";
import type { InferenceModel } from "../../api/kinds.ts";
import { shardEndpoints } from "./shard-endpoints.ts";

const shard = (fields: Partial<Shard>): Shard => ({
  role: "both",
  replica: 0,
  stage: 0,
  rank: 0,
  pod: "m-both-0-s0-t0-abc",
  endpoint: "10.0.0.1:50051",
  ready: true,
  entry: true,
  revision: "abc",
  ...fields,
});

const model = (shards: Shard[]): InferenceModel => ({ metadata: { name: "m" }, status: { shards } });

describe("shardEndpoints", () => {
  it("lists the ready entry shards with an address, by pod, with their roles", () => {
    const specs = shardEndpoints(
      model([
        shard({ role: "prefill", pod: "m-prefill-0", endpoint: "10.0.0.2:50051" }),
        shard({ role: "decode", pod: "m-decode-0", endpoint: "10.0.0.3:50051" }),
        shard({ role: "decode", pod: "m-decode-0-s1", stage: 1, entry: false }),
        shard({ role: "decode", pod: "m-decode-1", ready: false }),
        shard({ role: "decode", pod: "m-decode-2", endpoint: undefined }),
      ]),
    );
    assert.deepEqual(specs, [
      { name: "m-decode-0", address: "10.0.0.3:50051", role: "decode" },
      { name: "m-prefill-0", address: "10.0.0.2:50051", role: "prefill" },
    ]);
  });

  it("is empty for a model that is gone or has no status yet", () => {
    assert.deepEqual(shardEndpoints(undefined), []);
    assert.deepEqual(shardEndpoints({ metadata: { name: "m" } }), []);
  });
});

import assert from "node:assert/strict";
import type { Shard } from "../../services/api/inference-model-status.ts";
import { servingEndpoints } from "./shard-registry.ts";

const shard = (pod: string, extra: Partial<Shard>): Shard => ({
  role: "both",
  replica: 0,
  stage: 0,
  rank: 0,
  pod,
  endpoint: `${pod}:50051`,
  ready: true,
  entry: true,
  revision: "r",
  ...extra,
});

describe("shard registry", () => {
  it("routes to ready entry shards with an endpoint, by pod name", () => {
    const shards = [
      shard("a", {}),
      shard("b", { stage: 1, entry: false }),
      shard("c", { replica: 1, ready: false }),
      shard("d", { replica: 2, endpoint: undefined }),
      shard("e", { role: "prefill" }),
    ];
    assert.deepEqual(
      servingEndpoints({ shards }).map((e) => e.name),
      ["a", "e"],
    );
    assert.deepEqual(servingEndpoints({ shards }, "prefill"), [
      { name: "e", address: "e:50051", role: "prefill", replica: 0 },
    ]);
    assert.deepEqual(servingEndpoints(undefined), []);
  });
});

import assert from "node:assert/strict";
import { parseServeConfig } from "./serve-config.ts";
import { parseLayerRange, shardInput } from "./serve-shard-flags.ts";

describe("serve shard flags and environment", () => {
  const operatorEnv = {
    TESSERA_STAGE: "1",
    TESSERA_NUM_STAGES: "2",
    TESSERA_TENSOR_RANK: "0",
    TESSERA_TENSOR_SIZE: "2",
    TESSERA_PEERS: "a:50051,b:50051,c:50051,d:50051",
    TESSERA_LAYER_START: "6",
    TESSERA_LAYER_END: "12",
  };

  it("reads the operator's environment, layers as [start, end)", () => {
    const { value, error } = parseServeConfig({ modelDir: "/m", shard: shardInput({}, operatorEnv) });
    assert.equal(error, undefined);
    assert.deepEqual(value?.shard, {
      stage: 1,
      stages: 2,
      tensorRank: 0,
      tensorSize: 2,
      layers: { start: 6, end: 12 },
      peers: ["a:50051", "b:50051", "c:50051", "d:50051"],
      formationTimeoutMs: 600_000,
      stepTimeoutMs: 30_000,
      microBatches: 1,
    });
  });

  it("takes the dev cluster's hosts file (its stand-in for cluster DNS) from TESSERA_HOSTS_FILE", () => {
    const { value } = parseServeConfig({
      modelDir: "/m",
      shard: shardInput({}, { ...operatorEnv, TESSERA_HOSTS_FILE: "/var/dev/cluster-hosts" }),
    });
    assert.equal(value?.shard?.hostsFile, "/var/dev/cluster-hosts");
    assert.equal(shardInput({}, { ...operatorEnv, TESSERA_HOSTS_FILE: " " })?.["hostsFile"], undefined);
  });

  it("lets flags override the environment; --layers is inclusive", () => {
    const shard = shardInput(
      { pipelineStage: 0, layers: parseLayerRange("0-5")!, microBatches: 2 },
      operatorEnv,
    );
    assert.deepEqual(
      [shard?.["stage"], shard?.["layers"], shard?.["microBatches"]],
      [0, { start: 0, end: 6 }, 2],
    );
    assert.equal(parseLayerRange("5-3"), undefined);
    assert.equal(parseLayerRange("x"), undefined);
  });

  it("is no shard for a group of one, and names the field of a bad group", () => {
    assert.equal(
      shardInput({}, { TESSERA_NUM_STAGES: "1", TESSERA_TENSOR_SIZE: "1", TESSERA_PEERS: "a:1" }),
      undefined,
    );
    assert.equal(shardInput({}, {}), undefined);
    const short = parseServeConfig({
      modelDir: "/m",
      shard: shardInput({ tensorSize: 2, peers: "a:1" }, {}),
    });
    assert.match(short.error!.message, /^shard\.peers: must list one address per worker/);
    const rank = parseServeConfig({
      modelDir: "/m",
      shard: shardInput({ tensorSize: 2, tensorRank: 2, peers: "a:1,b:1" }, {}),
    });
    assert.match(rank.error!.message, /^shard\.tensorRank: /);
    const nan = parseServeConfig({
      modelDir: "/m",
      shard: shardInput({}, { ...operatorEnv, TESSERA_STAGE: "x" }),
    });
    assert.match(nan.error!.message, /^shard\.stage: /);
  });
});

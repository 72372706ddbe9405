// The load report and the router-facing model info over a real loopback gRPC connection.
import assert from "node:assert/strict";
import { Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { WorkerLoad } from "../../../proto/gen/tessera/v1/load_pb.js";
import type { ServedModel } from "../../inference/served-model.ts";
import type { GenerateEvent } from "../../inference/types.ts";
import { createLogger } from "../../kernel/log.ts";
import { GrpcClient } from "../../rpc/grpc-client.ts";
import { InferenceServer } from "./inference-server.ts";
import { engineLoad } from "./worker-load.ts";

const model: ServedModel = {
  description: { id: "m", architecture: "FakeForCausalLM", maxContext: 32, vocabSize: 8, dtype: "float32" },
  tokenizer: { vocabSize: 8, encode: () => [1], decode: () => "a" },
  generate: async function* (): AsyncIterable<GenerateEvent> {},
};

describe("WorkerLoad and ListModels for routers", () => {
  const engine = { engines: { numRunning: 2, numWaiting: 1 }, pool: { numUsed: 5, numBlocks: 40 } };
  let server: InferenceServer;
  let client: GrpcClient;

  before(async () => {
    server = await InferenceServer.start(model, {
      host: "127.0.0.1",
      port: 0,
      drainTimeoutMs: 1_000,
      log: createLogger("test", "silent"),
      modelInfo: { revision: "abc123", kvBlockSize: 16, eosTokenIds: [2] },
      load: engineLoad(engine),
    });
    client = new GrpcClient(`127.0.0.1:${server.port}`);
  });

  after(async () => {
    client.close();
    await server.shutdown();
  });

  it("reports the scheduler queues and the KV pool", async () => {
    const load = await client.unary(WorkerLoad.method.getLoad, {});
    assert.deepEqual(
      [load.running, load.waiting, load.kvBlocksUsed, load.kvBlocksTotal, load.callsInFlight],
      [2, 1, 5, 40, 0],
    );
  });

  it("lists the model with its revision, KV block size and eos ids", async () => {
    const { models } = await client.unary(Inference.method.listModels, {});
    assert.equal(models[0]?.revision, "abc123");
    assert.equal(models[0]?.kvBlockSize, 16);
    assert.deepEqual(models[0]?.eosTokenIds, [2]);
  });
});

import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { grpcServiceDefinition } from "./grpc-service.ts";

describe("grpcServiceDefinition", () => {
  const definition = grpcServiceDefinition(Inference);

  it("keys methods by local name with their gRPC paths and stream kinds", () => {
    assert.deepEqual(Object.keys(definition), ["generate", "tokenize", "listModels"]);
    assert.equal(definition["generate"]?.path, "/tessera.v1.Inference/Generate");
    assert.equal(definition["generate"]?.responseStream, true);
    assert.equal(definition["generate"]?.requestStream, false);
    assert.equal(definition["listModels"]?.path, "/tessera.v1.Inference/ListModels");
    assert.equal(definition["listModels"]?.responseStream, false);
  });

  it("serializes messages with the protobuf binary format", () => {
    const method = definition["generate"]!;
    const request = create(GenerateRequestSchema, {
      model: "tiny",
      prompt: { case: "tokenIds", value: { ids: [1, 2, 3] } },
      sampling: { maxTokens: 5, seed: 7n },
    });
    const bytes = method.requestSerialize(request);
    assert.ok(Buffer.isBuffer(bytes));
    assert.deepEqual(method.requestDeserialize(bytes), request);
  });
});

import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { Metadata } from "@grpc/grpc-js";
import { GenerateRequestSchema } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { bearer, fromGrpc } from "./grpc-request.ts";

describe("gRPC request", () => {
  it("takes the prompt, the sampling fields, the keys from metadata (the session key from the configured header) and the deadline", () => {
    const metadata = new Metadata();
    metadata.set("authorization", "Bearer sk-123");
    metadata.set("x-tenant-session", "chat-7");
    metadata.set("x-session-id", "not-this-one");
    const message = create(GenerateRequestSchema, {
      model: "m",
      prompt: { case: "tokenIds", value: { ids: [1, 2] } },
      sampling: { maxTokens: 4, seed: 9n },
      requestId: "r-1",
    });
    const request = fromGrpc(message, metadata, new Date(5_000), "x-tenant-session").value!;
    assert.deepEqual(request.prompt, { type: "tokens", ids: [1, 2] });
    assert.equal(request.sampling.maxTokens, 4);
    assert.equal(request.sampling.seed, 9n);
    assert.deepEqual(
      [request.requestId, request.apiKey, request.sessionKey, request.deadline],
      ["r-1", "sk-123", "chat-7", 5_000],
    );
  });

  it("makes a request id, has no deadline at infinity, and needs a prompt", () => {
    const request = fromGrpc(
      create(GenerateRequestSchema, { prompt: { case: "text", value: "x" } }),
      new Metadata(),
      Infinity,
      "x-session-id",
    ).value!;
    assert.ok(request.requestId.length > 0);
    assert.equal(request.deadline, undefined);
    assert.match(
      fromGrpc(create(GenerateRequestSchema, {}), new Metadata(), Infinity, "x-session-id").error?.message ??
        "",
      /^prompt: /,
    );
  });

  it("refuses priority and kv, which only a worker honours, naming them (found by fuzzing: they were dropped)", () => {
    const refused = (init: Parameters<typeof create<typeof GenerateRequestSchema>>[1]) =>
      fromGrpc(
        create(GenerateRequestSchema, { prompt: { case: "text", value: "x" }, ...init }),
        new Metadata(),
        Infinity,
        "x-session-id",
      ).error?.message;
    assert.match(refused({ priority: -1 }) ?? "", /^priority: /);
    assert.match(refused({ kv: { expectedRemoteBlocks: 2 } }) ?? "", /^kv: /);
    assert.match(refused({ kv: {} }) ?? "", /^kv: /);
  });

  it("takes a chat prompt for the router to render with the model's template", () => {
    const message = create(GenerateRequestSchema, {
      prompt: {
        case: "chat",
        value: {
          messages: [{ role: "user", content: "Hi" }],
          chatTemplateKwargs: { enable_thinking: false },
          continueFinalMessage: false,
        },
      },
    });
    const request = fromGrpc(message, new Metadata(), Infinity, "x-session-id").value!;
    assert.deepEqual(request.prompt, {
      type: "chat",
      messages: [{ role: "user", content: "Hi" }],
      options: {
        addGenerationPrompt: undefined,
        continueFinalMessage: false,
        kwargs: { enable_thinking: false },
        template: undefined,
      },
    });
  });

  it("reads bearer tokens", () => {
    assert.equal(bearer("Bearer abc"), "abc");
    assert.equal(bearer("bearer  abc"), "abc");
    assert.equal(bearer("Basic abc"), undefined);
    assert.equal(bearer(undefined), undefined);
  });
});

// The server over a real loopback gRPC connection, with a fake model whose pace the tests control.
import assert from "node:assert/strict";
import type { ServiceError } from "@grpc/grpc-js";
import {
  FinishReason,
  type GenerateResponse,
  Inference,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import { GrpcClient } from "../../rpc/grpc-client.ts";
import { checkHealth } from "../../rpc/health-client.ts";
import { FakeModel, until } from "./fake-served-model.ts";
import { InferenceServer } from "./inference-server.ts";

function collect(
  stream: NodeJS.ReadableStream & { on(e: "data", f: (m: GenerateResponse) => void): unknown },
) {
  const messages: GenerateResponse[] = [];
  stream.on("data", (m: GenerateResponse) => messages.push(m));
  return new Promise<GenerateResponse[]>((resolve, reject) => {
    stream.on("end", () => resolve(messages));
    stream.on("error", reject);
  });
}

function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  return promise.then(
    () => assert.fail("expected the call to fail"),
    (err: ServiceError) => err,
  );
}

describe("InferenceServer", () => {
  let model: FakeModel;
  let server: InferenceServer;
  let client: GrpcClient;
  let address: string;

  beforeEach(async () => {
    model = new FakeModel();
    const log = createLogger("test", "silent");
    server = await InferenceServer.start(model, { host: "127.0.0.1", port: 0, drainTimeoutMs: 5_000, log });
    address = `127.0.0.1:${server.port}`;
    client = new GrpcClient(address);
  });

  afterEach(async () => {
    client.close();
    await server.shutdown();
  });

  it("streams one message per engine event, the last with finish reason and usage", async () => {
    const messages = await collect(
      client.serverStream(Inference.method.generate, {
        prompt: { case: "tokenIds", value: { ids: [0, 1] } },
        sampling: { maxTokens: 3 },
        requestId: "req-1",
      }),
    );
    assert.deepEqual(
      messages.map((m) => m.tokens.map((t) => t.tokenId)),
      [[2], [3], [4], []],
    );
    assert.equal(messages.map((m) => m.textDelta).join(""), "cde");
    assert.ok(messages.every((m) => m.requestId === "req-1"));
    const last = messages.at(-1);
    assert.equal(last?.finishReason, FinishReason.LENGTH);
    assert.deepEqual(
      [last?.usage?.promptTokens, last?.usage?.completionTokens, last?.usage?.totalTokens],
      [2, 3, 5],
    );
  });

  it("echo: the prompt's text opens the generated text", async () => {
    const messages = await collect(
      client.serverStream(Inference.method.generate, {
        prompt: { case: "text", value: "ab" },
        sampling: { maxTokens: 2, echo: true },
      }),
    );
    assert.equal(messages[0]?.textDelta, "abc");
    assert.equal(messages.map((m) => m.textDelta).join(""), "abcd");
  });

  it("tokenizes text with the tokenizer's special tokens when asked, and lists the model", async () => {
    const plain = await client.unary(Inference.method.tokenize, { text: "abc" });
    assert.deepEqual(plain.tokenIds, [0, 1, 2]);
    assert.deepEqual(plain.tokens, ["a", "b", "c"]);
    const special = await client.unary(Inference.method.tokenize, { text: "abc", addSpecialTokens: true });
    assert.deepEqual(special.tokenIds, [1, 0, 1, 2]);
    const { models } = await client.unary(Inference.method.listModels, {});
    assert.deepEqual(
      models.map(({ id, architecture, maxContext, vocabSize, dtype }) => ({
        id,
        architecture,
        maxContext,
        vocabSize,
        dtype,
      })),
      [model.description],
    );
  });

  it("answers NOT_FOUND for a model it does not serve", async () => {
    const err = await rejection(client.unary(Inference.method.tokenize, { model: "gpt-9", text: "a" }));
    assert.equal(err.code, Code.NOT_FOUND);
    assert.match(err.details, /gpt-9/);
    const stream = client.serverStream(Inference.method.generate, {
      model: "gpt-9",
      prompt: { case: "text", value: "a" },
    });
    assert.equal((await rejection(collect(stream))).code, Code.NOT_FOUND);
  });

  const badRequests: [string, Parameters<GrpcClient["serverStream"]>[1], RegExp][] = [
    ["no prompt", {}, /^prompt: /],
    ["an empty text prompt", { prompt: { case: "text", value: "" } }, /^text: must not be empty/],
    [
      "an empty id prompt",
      { prompt: { case: "tokenIds", value: { ids: [] } } },
      /^token_ids: must not be empty/,
    ],
    [
      "an id outside the vocabulary",
      { prompt: { case: "tokenIds", value: { ids: [1, 64] } } },
      /^token_ids\[1\]: 64 /,
    ],
    [
      "a prompt longer than the context",
      { prompt: { case: "text", value: "a".repeat(40) } },
      /^prompt: 41 tokens/,
    ],
    [
      "negative max_tokens",
      { prompt: { case: "text", value: "a" }, sampling: { maxTokens: -1 } },
      /^max_tokens: /,
    ],
    [
      "a negative temperature",
      { prompt: { case: "text", value: "a" }, sampling: { temperature: -1 } },
      /^temperature: /,
    ],
    [
      "a logit_bias id outside the vocabulary",
      { prompt: { case: "text", value: "a" }, sampling: { logitBias: { 64: 1 } } },
      /^logit_bias: key "64" is not a token id/,
    ],
    [
      "a logit_bias beyond 100",
      { prompt: { case: "text", value: "a" }, sampling: { logitBias: { 3: 101 } } },
      /^logit_bias: the bias of 3/,
    ],
    ["n above 16", { prompt: { case: "text", value: "a" }, sampling: { n: 17 } }, /^n: /],
    [
      "best_of below n",
      { prompt: { case: "text", value: "a" }, sampling: { n: 3, bestOf: 2 } },
      /^best_of: /,
    ],
    [
      "prompt_logprobs above 20",
      { prompt: { case: "text", value: "a" }, sampling: { promptLogprobs: 21 } },
      /^prompt_logprobs: /,
    ],
  ];
  for (const [name, request, details] of badRequests) {
    it(`answers INVALID_ARGUMENT naming the field for ${name}`, async () => {
      const err = await rejection(collect(client.serverStream(Inference.method.generate, request)));
      assert.equal(err.code, Code.INVALID_ARGUMENT);
      assert.match(err.details, details);
    });
  }

  it("keeps a stream going while bad requests fail beside it", async () => {
    const hold = Promise.withResolvers<void>();
    model.pace = () => hold.promise;
    const good = collect(
      client.serverStream(Inference.method.generate, {
        prompt: { case: "text", value: "a" },
        sampling: { maxTokens: 2 },
      }),
    );
    const bad = collect(
      client.serverStream(Inference.method.generate, { prompt: { case: "tokenIds", value: { ids: [99] } } }),
    );
    assert.equal((await rejection(bad)).code, Code.INVALID_ARGUMENT);
    hold.resolve();
    assert.equal((await good).at(-1)?.finishReason, FinishReason.LENGTH);
  });

  it("aborts the generation when the client cancels", async () => {
    model.pace = () => new Promise(() => {});
    const stream = client.serverStream(Inference.method.generate, { prompt: { case: "text", value: "a" } });
    stream.on("error", () => {});
    await until(() => model.signals.length === 1);
    stream.cancel();
    await until(() => model.signals[0]?.aborted === true);
    await until(() => server.activeCalls === 0);
  });

  it("aborts the generation when the deadline passes", async () => {
    model.pace = () => new Promise(() => {});
    const stream = client.serverStream(
      Inference.method.generate,
      { prompt: { case: "text", value: "a" } },
      { deadline: Date.now() + 200 },
    );
    assert.equal((await rejection(collect(stream))).code, Code.DEADLINE_EXCEEDED);
    await until(() => model.signals[0]?.aborted === true);
  });

  it("drains on shutdown: NOT_SERVING, new calls UNAVAILABLE, calls in flight finish", async () => {
    assert.equal(await checkHealth(address), "SERVING");
    assert.equal(await checkHealth(address, "tessera.v1.Inference"), "SERVING");
    const hold = Promise.withResolvers<void>();
    model.pace = () => hold.promise;
    const inFlight = collect(
      client.serverStream(Inference.method.generate, {
        prompt: { case: "text", value: "a" },
        sampling: { maxTokens: 3 },
      }),
    );
    await until(() => model.signals.length === 1);
    const shutdown = server.shutdown();
    assert.equal(await checkHealth(address), "NOT_SERVING");
    const refused = await rejection(client.unary(Inference.method.tokenize, { text: "a" }));
    assert.equal(refused.code, Code.UNAVAILABLE);
    hold.resolve();
    const messages = await inFlight;
    assert.equal(messages.at(-1)?.finishReason, FinishReason.LENGTH);
    assert.equal(messages.map((m) => m.textDelta).join(""), "bcd");
    assert.deepEqual(await shutdown, { cancelled: 0 });
  });

  it("cancels the calls still running when the drain timeout passes", async () => {
    const log = createLogger("test", "silent");
    const quick = await InferenceServer.start(model, {
      host: "127.0.0.1",
      port: 0,
      drainTimeoutMs: 100,
      log,
    });
    const quickClient = new GrpcClient(`127.0.0.1:${quick.port}`);
    model.pace = () => new Promise(() => {});
    const stream = collect(
      quickClient.serverStream(Inference.method.generate, { prompt: { case: "text", value: "a" } }),
    );
    await until(() => model.signals.length === 1);
    assert.deepEqual(await quick.shutdown(), { cancelled: 1 });
    assert.equal((await stream).at(-1)?.finishReason, FinishReason.CANCELLED);
    quickClient.close();
  });
});

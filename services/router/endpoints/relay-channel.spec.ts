// The router's RelayChannel against a worker's real InferenceServer (its Relay service) over loopback
// gRPC, with a fake model whose pace the tests control.
import assert from "node:assert/strict";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  FinishReason,
  type GenerateResponse,
  Inference,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import {
  Relay,
  RelayGenerateRequestSchema,
  type RelayGenerateResponse,
} from "../../../proto/gen/tessera/v1/relay_pb.js";
import { Code, type TesseraError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import { GrpcClient } from "../../rpc/grpc-client.ts";
import { bind } from "../../rpc/grpc-listen.ts";
import { grpcServiceDefinition } from "../../rpc/grpc-service.ts";
import { FakeModel, until } from "../../worker/server/fake-served-model.ts";
import { InferenceServer } from "../../worker/server/inference-server.ts";
import { RelayChannel, RelayUnsupportedError } from "./relay-channel.ts";

interface Outcome {
  messages: GenerateResponse[];
  error: TesseraError | undefined;
}

function open(channel: RelayChannel, ids: number[], maxTokens: number, deadline?: number) {
  const messages: GenerateResponse[] = [];
  let cancel = () => {};
  const done = new Promise<Outcome>((resolve) => {
    cancel = channel.open(
      { prompt: { case: "tokenIds", value: { ids } }, sampling: { maxTokens }, requestId: `r${ids[0]}` },
      deadline,
      { message: (m) => messages.push(m), end: (error) => resolve({ messages, error }) },
    );
  });
  return { done, cancel, messages };
}

const ids = (o: Outcome) => o.messages.flatMap((m) => m.tokens.map((t) => t.tokenId));

describe("RelayChannel over a worker's Relay service", () => {
  let model: FakeModel;
  let server: InferenceServer;
  let client: GrpcClient;
  let channel: RelayChannel;

  beforeEach(async () => {
    model = new FakeModel();
    const log = createLogger("test", "silent");
    server = await InferenceServer.start(model, { host: "127.0.0.1", port: 0, drainTimeoutMs: 5_000, log });
    client = new GrpcClient(`127.0.0.1:${server.port}`);
    channel = new RelayChannel("worker-0", client);
  });

  afterEach(async () => {
    channel.close();
    client.close();
    await server.shutdown();
  });

  it("fails a request protobuf cannot encode alone, not the stream the others share", async () => {
    const other = open(channel, [0, 1], 3);
    const bad = await new Promise<Outcome>((resolve) =>
      channel.open(
        { prompt: { case: "tokenIds", value: { ids: [0] } }, sampling: { repetitionPenalty: 1e308 } },
        undefined,
        { message: () => {}, end: (error) => resolve({ messages: [], error }) },
      ),
    );
    assert.equal(bad.error?.code, Code.INVALID_ARGUMENT);
    assert.match(bad.error?.message ?? "", /repetition_penalty/);
    const served = await other.done;
    assert.equal(served.error, undefined);
    assert.equal(ids(served).length, 3);
  });

  it("streams each generation's messages as Generate does, less request id and text, several at once on one stream", async () => {
    const relayed = await Promise.all([open(channel, [0, 1], 3).done, open(channel, [10], 2).done]);
    const direct = await new Promise<GenerateResponse[]>((resolve, reject) => {
      const got: GenerateResponse[] = [];
      const stream = client.serverStream(Inference.method.generate, {
        prompt: { case: "tokenIds", value: { ids: [0, 1] } },
        sampling: { maxTokens: 3 },
        requestId: "r0",
      });
      stream.on("data", (m: GenerateResponse) => got.push(m));
      stream.on("end", () => resolve(got));
      stream.on("error", reject);
    });
    // The router knows the request id and makes the text from the tokens: frames carry neither.
    assert.ok(direct.some((m) => m.textDelta !== "") && direct.every((m) => m.requestId === "r0"));
    assert.deepEqual(
      relayed[0]?.messages,
      direct.map((m) => ({ ...m, requestId: "", textDelta: "" })),
    );
    assert.equal(relayed[0]?.error, undefined);
    assert.deepEqual(ids(relayed[1]!), [11, 12]);
    assert.equal(relayed[1]?.messages.at(-1)?.finishReason, FinishReason.LENGTH);
    assert.equal(channel.size, 0);
  });

  it("sends the frames of one step of many generations as one message", async () => {
    let release = Promise.withResolvers<void>();
    model.pace = () => release.promise;
    const raw = client.bidiStream(Relay.method.generate);
    const responses: RelayGenerateResponse[] = [];
    raw.on("data", (r: RelayGenerateResponse) => responses.push(r));
    for (let n = 1; n <= 8; n++)
      raw.write(
        toBinary(
          RelayGenerateRequestSchema,
          create(RelayGenerateRequestSchema, {
            kind: {
              case: "open",
              value: {
                streamId: BigInt(n),
                request: { prompt: { case: "tokenIds", value: { ids: [n] } }, sampling: { maxTokens: 2 } },
              },
            },
          }),
        ),
      );
    await until(() => model.signals.length === 8);
    for (let step = 0; step < 2; step++) {
      const gate = release;
      release = Promise.withResolvers<void>();
      gate.resolve();
      await until(() => responses.length > step);
    }
    release.resolve();
    const frames = () => responses.flatMap((r) => r.frames);
    await until(() => frames().filter((f) => f.end).length === 8);
    // 8 × (2 token messages, the finish message and the end) frames, in a handful of messages.
    assert.equal(frames().length, 8 * 4);
    assert.ok(responses.length <= 4, `${responses.length} messages`);
    assert.ok(frames().every((f) => !f.end || f.status === Code.OK));
    raw.cancel();
    raw.on("error", () => {});
  });

  it("cancels a generation on the worker and calls none of its handlers after", async () => {
    model.pace = () => new Promise(() => {});
    const held = open(channel, [0], 5);
    let ended = false;
    held.done.then(() => {
      ended = true;
    });
    const other = open(channel, [20], 2);
    await until(() => model.signals.length === 2);
    held.cancel();
    await until(() => model.signals[0]?.aborted === true);
    await until(() => server.activeCalls === 1);
    assert.equal(model.signals[1]?.aborted, false);
    other.cancel();
    await until(() => server.activeCalls === 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(ended, false);
    assert.deepEqual(held.messages, []);
    assert.equal(channel.size, 0);
  });

  it("opens a new generation in a cancelled one's place while the worker still runs that one", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.pace = () => gate;
    const cancelled = open(channel, [0], 4);
    let ended = false;
    cancelled.done.then(() => {
      ended = true;
    });
    await until(() => model.signals.length === 1);
    cancelled.cancel();
    // Sent before the worker has taken the cancel: a stream id of its own, though it reuses the slot.
    const next = open(channel, [20], 3);
    await until(() => model.signals.length === 2);
    release();
    const outcome = await next.done;
    assert.equal(outcome.error, undefined);
    assert.equal(ids(outcome).length, 3);
    await until(() => server.activeCalls === 0);
    assert.equal(ended, false);
    assert.deepEqual(cancelled.messages, []);
    assert.equal(channel.size, 0);
  });

  it("fails a generation whose deadline passes with DEADLINE_EXCEEDED, and a bad one with INVALID_ARGUMENT beside a good one", async () => {
    model.pace = () => new Promise((resolve) => setTimeout(resolve, 20));
    const late = open(channel, [0], 50, Date.now() + 100);
    const bad = open(channel, [0], -1);
    const good = open(channel, [30], 3);
    assert.equal((await late.done).error?.code, Code.DEADLINE_EXCEEDED);
    assert.equal((await bad.done).error?.code, Code.INVALID_ARGUMENT);
    assert.match((await bad.done).error?.message ?? "", /max_tokens/);
    const ok = await good.done;
    assert.equal(ok.error, undefined);
    assert.deepEqual(ids(ok), [31, 32, 33]);
    await until(() => model.signals[0]?.aborted === true);
  });

  it("finishes generations in flight on shutdown, refuses new ones and ends the stream", async () => {
    const hold = Promise.withResolvers<void>();
    model.pace = () => hold.promise;
    const running = open(channel, [0], 2);
    await until(() => model.signals.length === 1);
    const shutdown = server.shutdown();
    const refused = await open(channel, [5], 2).done;
    assert.equal(refused.error?.code, Code.UNAVAILABLE);
    hold.resolve();
    const finished = await running.done;
    assert.equal(finished.error, undefined);
    assert.deepEqual(ids(finished), [1, 2]);
    assert.deepEqual(await shutdown, { cancelled: 0 });
  });

  it("fails every open generation with UNAVAILABLE when the worker goes away", async () => {
    model.pace = () => new Promise(() => {});
    const a = open(channel, [0], 5);
    const b = open(channel, [9], 5);
    await until(() => model.signals.length === 2);
    await server.shutdown();
    for (const outcome of await Promise.all([a.done, b.done]))
      assert.equal(outcome.error?.code, Code.UNAVAILABLE);
    assert.equal(channel.supported, true);
  });
});

describe("RelayChannel to a worker without the Relay service", () => {
  it("reports it unsupported, so callers fall back to one Generate call per request", async () => {
    const { Server } = await import("@grpc/grpc-js");
    const server = new Server();
    server.addService(grpcServiceDefinition(Inference), {
      generate: () => {},
      tokenize: () => {},
      listModels: () => {},
    });
    const port = await bind(server, "127.0.0.1", 0);
    const client = new GrpcClient(`127.0.0.1:${port}`);
    const channel = new RelayChannel("old-worker", client);
    try {
      const outcome = await open(channel, [0], 1).done;
      assert.ok(outcome.error instanceof RelayUnsupportedError);
      assert.equal(channel.supported, false);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});

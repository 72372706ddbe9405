import assert from "node:assert/strict";
import type { ServerHttp2Stream } from "node:http2";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import {
  Client,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import {
  FinishReason,
  type GenerateRequest,
  GenerateRequestSchema,
  type GenerateResponse,
  Inference,
  TokenizeRequestSchema,
  TokenizeResponseSchema,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import { Code } from "../kernel/errors.ts";
import { grpcServiceDefinition } from "./grpc-service.ts";
import { Http2ServerCall } from "./http2-server-call.ts";
import { framedGenerateResponse, generateResponseCodec } from "./stream-codecs.ts";
import { takeOverStreams } from "./testing/grpc-stream-takeover.ts";

const GENERATE = "/tessera.v1.Inference/Generate";
const METADATA_KEYS = ["authorization", "x-trace-bin", "content-type", "te", "grpc-timeout", "x-absent"];
const REQUEST = {
  typeName: GenerateRequestSchema.typeName,
  decode: (bytes: Uint8Array) => fromBinary(GenerateRequestSchema, bytes),
};

function response(
  requestId: string,
  textDelta: string,
  finishReason = FinishReason.UNSPECIFIED,
): GenerateResponse {
  return {
    $typeName: "tessera.v1.GenerateResponse",
    requestId,
    tokens: [],
    textDelta,
    finishReason,
    kvWritesFailed: false,
    index: 0,
    promptLogprobs: [],
  };
}

/** Waits up to a second for `condition`, then asserts it. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition());
}

interface Received {
  messages: GenerateResponse[];
  headers?: Metadata;
  trailers?: Metadata;
  error?: ServiceError;
}

describe("gRPC calls served on their HTTP/2 stream", () => {
  let server: Server;
  let client: Client;
  let compressing: Client;
  const calls: {
    call: Http2ServerCall;
    request: GenerateRequest;
    metadata: Record<string, { get: unknown; metadata: unknown }>;
    cancelled: boolean;
  }[] = [];
  const streams: ServerHttp2Stream[] = [];
  /** The listeners the call put on each stream (node:http2 has its own on the same events). */
  const callListeners = new Map<ServerHttp2Stream, unknown[]>();
  const listenersOf = (stream: ServerHttp2Stream) =>
    ["data", "end", "close"].flatMap((event) => stream.rawListeners(event));

  before(async () => {
    server = new Server();
    server.addService(grpcServiceDefinition(Inference), {
      tokenize: (_call: unknown, callback: (err: null, value: object) => void) =>
        callback(null, { $typeName: TokenizeResponseSchema.typeName, tokenIds: [7], tokens: ["x"] }),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    takeOverStreams(
      server,
      new Map([
        [
          GENERATE,
          (stream, headers, path) => {
            streams.push(stream);
            const before = new Set(listenersOf(stream));
            Http2ServerCall.serve(stream, headers, path, REQUEST, 1_000, (call, request) => {
              // The metadata is read when the call starts (the headers are let go after).
              const metadata = Object.fromEntries(
                METADATA_KEYS.map((key) => [key, { get: call.get(key), metadata: call.metadata.get(key) }]),
              );
              const seen = { call, request, metadata, cancelled: false };
              calls.push(seen);
              const controller = new AbortController();
              controller.signal.addEventListener("abort", () => {
                seen.cancelled = true;
              });
              call.abortOnCancel(controller);
              // The model field scripts the answer.
              if (request.model === "fail") call.end(Code.NOT_FOUND, "model: no such model ✗");
              else if (request.model === "hang") call.sendHeaders({ "x-tessera-endpoint": "w1" });
              else {
                call.sendHeaders({ "x-tessera-endpoint": "w1" });
                call.write(framedGenerateResponse(response(request.requestId, "Hello")));
                call.write(
                  framedGenerateResponse(response(request.requestId, " world", FinishReason.LENGTH)),
                );
                call.end(Code.OK, "", { "x-tessera-path": "w1" });
              }
            });
            callListeners.set(
              stream,
              listenersOf(stream).filter((listener) => !before.has(listener)),
            );
          },
        ],
      ]),
    );
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    compressing = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), {
      "grpc.default_compression_algorithm": 2, // gzip
    });
  });
  after(() => {
    client?.close();
    compressing?.close();
    server?.forceShutdown();
  });

  const generate = (
    request: MessageInitShape<typeof GenerateRequestSchema> | Buffer,
    options: { metadata?: Metadata; deadline?: number; on?: Client } = {},
  ) =>
    new Promise<Received>((resolve) => {
      const bytes = Buffer.isBuffer(request)
        ? request
        : Buffer.from(toBinary(GenerateRequestSchema, create(GenerateRequestSchema, request)));
      const received: Received = { messages: [] };
      const stream = (options.on ?? client).makeServerStreamRequest(
        GENERATE,
        (b: Buffer) => b,
        (b: Buffer) => generateResponseCodec.decode(b),
        bytes,
        options.metadata ?? new Metadata(),
        options.deadline ? { deadline: options.deadline } : {},
      );
      stream.on("metadata", (m) => (received.headers = m));
      stream.on("data", (m: GenerateResponse) => received.messages.push(m));
      stream.on("status", (s) => (received.trailers = s.metadata));
      stream.on("error", (e: ServiceError) => (received.error = e));
      stream.on("close", () => resolve(received));
      stream.on("end", () => setImmediate(() => resolve(received)));
    });

  it("streams the messages with headers and trailing metadata, and hands over the request and its metadata", async () => {
    const metadata = new Metadata();
    metadata.set("authorization", "Bearer k1");
    metadata.set("x-trace-bin", Buffer.of(1, 2, 250));
    const got = await generate({ requestId: "r1", model: "m" }, { metadata });
    assert.equal(got.error, undefined);
    assert.deepEqual(
      got.messages.map((m) => [m.requestId, m.textDelta, m.finishReason]),
      [
        ["r1", "Hello", FinishReason.UNSPECIFIED],
        ["r1", " world", FinishReason.LENGTH],
      ],
    );
    assert.deepEqual(got.headers?.get("x-tessera-endpoint"), ["w1"]);
    assert.deepEqual(got.trailers?.get("x-tessera-path"), ["w1"]);
    const { call, request, metadata: read } = calls.at(-1)!;
    assert.equal(request.requestId, "r1");
    assert.equal(call.path, GENERATE);
    // Read straight from the headers, as grpc-js's Metadata would give them.
    for (const key of METADATA_KEYS) assert.deepEqual(read[key]!.get, read[key]!.metadata, key);
    assert.deepEqual(read["authorization"]!.get, ["Bearer k1"]);
    assert.deepEqual(read["x-trace-bin"]!.get, [Buffer.of(1, 2, 250)]);
    assert.equal(call.deadline, Number.POSITIVE_INFINITY);
  });

  it("reads a gzip-compressed request", async () => {
    const got = await generate({ requestId: "gz", model: "m" }, { on: compressing });
    assert.equal(got.error, undefined);
    assert.equal(calls.at(-1)!.request.requestId, "gz");
  });

  it("answers an error before any message as a status with its message", async () => {
    const got = await generate({ model: "fail" });
    assert.equal(got.error?.code, status.NOT_FOUND);
    assert.equal(got.error?.details, "model: no such model ✗");
    assert.equal(got.messages.length, 0);
  });

  it("refuses bytes that are not the request type with INVALID_ARGUMENT naming `request`, before the handler", async () => {
    const before = calls.length;
    const got = await generate(Buffer.of(0xff, 0xff));
    assert.equal(got.error?.code, status.INVALID_ARGUMENT);
    assert.match(got.error?.details ?? "", /^request: not a valid tessera\.v1\.GenerateRequest: /);
    assert.equal(calls.length, before);
  });

  it("refuses a request over the size bound with RESOURCE_EXHAUSTED", async () => {
    const got = await generate({ model: "m", prompt: { case: "text", value: "x".repeat(2_000) } });
    assert.equal(got.error?.code, status.RESOURCE_EXHAUSTED);
    assert.match(got.error?.details ?? "", /larger than max/);
  });

  it("ends a call whose deadline passes with DEADLINE_EXCEEDED, and cancels it", async () => {
    const got = await generate({ model: "hang" }, { deadline: Date.now() + 200 });
    assert.equal(got.error?.code, status.DEADLINE_EXCEEDED);
    const seen = calls.at(-1)!;
    assert.ok(seen.call.deadline <= Date.now());
    assert.deepEqual(seen.metadata["grpc-timeout"]!.get, [], "transport headers are not metadata");
    await until(() => seen.cancelled);
  });

  /** A Generate call the handler never answers, once its headers are back. */
  async function openHanging() {
    const stream = client.makeServerStreamRequest(
      GENERATE,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from(toBinary(GenerateRequestSchema, create(GenerateRequestSchema, { model: "hang" }))),
      new Metadata(),
      {},
    );
    stream.on("error", () => {});
    await new Promise((resolve) => stream.once("metadata", resolve));
    return stream;
  }

  it("tells the handler when the client cancels", async () => {
    const before = calls.length;
    const stream = await openHanging();
    assert.equal(calls.length, before + 1);
    stream.cancel();
    const seen = calls.at(-1)!;
    await until(() => seen.cancelled);
    assert.equal(seen.call.cancelled, true);
    await seen.call.closed();
  });

  it("stops waiting for a stream to close when the caller's signal aborts (a drain that is out of time)", async () => {
    const stream = await openHanging();
    const { call } = calls.at(-1)!;
    const controller = new AbortController();
    const closed = call.closed(controller.signal);
    controller.abort();
    await closed;
    assert.equal(call.cancelled, false, "the call itself goes on");
    stream.cancel();
  });

  // node:http2 keeps a closed stream, and whatever it references, until V8's next full collection
  // (bench/suites/router/h2-retention.ts): a stream still holding its call would carry the request's
  // objects into the old generation.
  it("lets go of the call once its stream closed, whether the call ended or was cancelled", async () => {
    const held = (stream: ServerHttp2Stream) =>
      callListeners.get(stream)!.filter((listener) => listenersOf(stream).includes(listener as never)).length;
    await generate({ requestId: "done", model: "m" });
    const ended = { stream: streams.at(-1)!, call: calls.at(-1)!.call };
    await until(() => ended.stream.closed);
    await ended.call.closed();
    assert.equal(held(ended.stream), 0);
    assert.equal(ended.call.abortsOnCancel, false);

    const client = await openHanging();
    const cancelled = { stream: streams.at(-1)!, seen: calls.at(-1)! };
    assert.equal(held(cancelled.stream), 2, "an open call is held by its stream ('data' and 'close')");
    client.cancel();
    await until(() => cancelled.seen.cancelled);
    await cancelled.seen.call.closed();
    assert.equal(held(cancelled.stream), 0);
    assert.equal(cancelled.seen.call.abortsOnCancel, false);
  });

  it("leaves the other methods to grpc-js", async () => {
    const answer = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        "/tessera.v1.Inference/Tokenize",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(toBinary(TokenizeRequestSchema, create(TokenizeRequestSchema, { text: "x" }))),
        new Metadata(),
        {},
        (err, value) => (err ? reject(err) : resolve(value!)),
      ),
    );
    assert.deepEqual([...fromBinary(TokenizeResponseSchema, answer).tokenIds], [7]);
  });
});

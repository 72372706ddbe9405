import assert from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type GenerateResponse,
  GenerateResponseSchema,
  Inference,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import {
  Relay,
  type RelayGenerateResponse,
  RelayGenerateResponseSchema,
} from "../../proto/gen/tessera/v1/relay_pb.js";
import { grpcMethodDefinition } from "./grpc-service.ts";
import { generateResponseCodec, relayGenerateResponseCodec } from "./stream-codecs.ts";

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
function rng(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pieces = ["", "a", "hé", "日本", "🦀", " the", "\n", "\u0000", "x".repeat(200)];
  const text = () => Array.from({ length: int(4) }, () => pieces[int(pieces.length)]!).join("");
  const uint32 = () => [0, 1, 127, 128, 16_383, 16_384, 2 ** 21, 2 ** 28, 2 ** 32 - 1, int(50_000)][int(10)]!;
  const float = () =>
    [0, -0.5, -12.75, Math.fround(-Math.PI), Math.fround(-1e-8), Math.fround(next() * -30)][int(6)]!;
  return { int, text, uint32, float, next };
}

function randomResponse(r: ReturnType<typeof rng>): GenerateResponse {
  return create(GenerateResponseSchema, {
    requestId: r.text(),
    tokens: Array.from({ length: r.int(4) }, () => ({
      tokenId: r.uint32(),
      logprob: r.float(),
      topLogprobs: Array.from({ length: r.int(3) }, () => ({
        tokenId: r.uint32(),
        logprob: r.float(),
        text: r.text(),
      })),
    })),
    textDelta: r.text(),
    finishReason: r.int(6),
    ...(r.int(2) === 0 && {
      usage: { promptTokens: r.uint32(), completionTokens: r.uint32(), totalTokens: r.uint32() },
    }),
    kvWritesFailed: r.int(4) === 0,
    // Fields 30 and 31 (two-byte tags): the sequence index and the prompt's logprobs (NaN for the first).
    index: r.int(3) === 0 ? r.uint32() : 0,
    promptLogprobs: Array.from({ length: r.int(3) }, (_, i) => ({
      tokenId: r.uint32(),
      logprob: i === 0 ? Number.NaN : r.float(),
      topLogprobs: [{ tokenId: r.uint32(), logprob: r.float(), text: r.text() }],
    })),
  });
}

function randomRelay(r: ReturnType<typeof rng>): RelayGenerateResponse {
  const ids = [0n, 1n, 127n, 128n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 64n - 1n];
  return create(RelayGenerateResponseSchema, {
    frames: Array.from({ length: r.int(5) }, () => ({
      streamId: ids[r.int(ids.length)]!,
      ...(r.int(3) > 0 && { response: randomResponse(r) }),
      end: r.int(2) === 0,
      status: [0, 1, 14, 16, -1, -2_147_483_648][r.int(6)]!,
      statusMessage: r.text(),
      workerMs: [0, 0.001, 812.412345, 1e9, -1][r.int(5)]!,
    })),
  });
}

describe("stream codecs", () => {
  it("write the bytes protobuf-es writes and read them back as protobuf-es does", () => {
    const r = rng(7);
    for (let i = 0; i < 2_000; i++) {
      const response = randomResponse(r);
      const bytes = toBinary(GenerateResponseSchema, response);
      assert.deepEqual(new Uint8Array(generateResponseCodec.encode(response)), bytes, `case ${i}`);
      assert.deepEqual(generateResponseCodec.decode(bytes), fromBinary(GenerateResponseSchema, bytes));

      const relay = randomRelay(r);
      const relayBytes = toBinary(RelayGenerateResponseSchema, relay);
      assert.deepEqual(new Uint8Array(relayGenerateResponseCodec.encode(relay)), relayBytes, `case ${i}`);
      assert.deepEqual(
        relayGenerateResponseCodec.decode(relayBytes),
        fromBinary(RelayGenerateResponseSchema, relayBytes),
      );
    }
  });

  it("skip fields a newer peer may send", () => {
    const response = create(GenerateResponseSchema, {
      requestId: "r-1",
      tokens: [{ tokenId: 42, logprob: -0.25 }],
      textDelta: "ok",
    });
    const unknown = Buffer.from([
      (9 << 3) | 0,
      0x96,
      0x01, // varint 150
      (10 << 3) | 1,
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8, // fixed64
      (11 << 3) | 2,
      3,
      0x61,
      0x62,
      0x63, // bytes "abc"
      (12 << 3) | 5,
      1,
      2,
      3,
      4, // fixed32
      (1 << 3) | 0,
      5, // a known number with another wire type
    ]);
    const bytes = Buffer.concat([toBinary(GenerateResponseSchema, response), unknown]);
    const decoded = generateResponseCodec.decode(bytes);
    assert.deepEqual(decoded, response);
  });

  it("fail on truncated or malformed input", () => {
    const bytes = generateResponseCodec.encode(
      create(GenerateResponseSchema, { requestId: "abc", tokens: [{ tokenId: 300, logprob: -1 }] }),
    );
    // Cut between two fields the rest is a valid message (protobuf has no end marker); anywhere else it fails.
    const boundary = 5;
    assert.deepEqual(
      generateResponseCodec.decode(bytes.subarray(0, boundary)),
      create(GenerateResponseSchema, { requestId: "abc" }),
    );
    for (let cut = 1; cut < bytes.length; cut++)
      if (cut !== boundary)
        assert.throws(
          () => generateResponseCodec.decode(bytes.subarray(0, cut)),
          RangeError,
          `cut at ${cut}`,
        );
    assert.throws(() => generateResponseCodec.decode(Buffer.from([(1 << 3) | 3])), /wire type 3/);
    assert.throws(() => generateResponseCodec.decode(Buffer.from([0, 1])), /field number 0/);
    assert.throws(() => relayGenerateResponseCodec.decode(Buffer.from([0x0a, 0x05, 0x08])), RangeError);
  });

  it("serve the Generate and Relay streams (the other messages stay with protobuf-es)", () => {
    const response = randomResponse(rng(3));
    const generate = grpcMethodDefinition(Inference.method.generate);
    const bytes = generate.responseSerialize(response);
    assert.deepEqual(new Uint8Array(bytes), toBinary(GenerateResponseSchema, response));
    assert.deepEqual(generate.responseDeserialize(bytes), response);
    const relay = grpcMethodDefinition(Relay.method.generate);
    const batch = randomRelay(rng(4));
    assert.deepEqual(relay.responseDeserialize(relay.responseSerialize(batch)), batch);
  });
});

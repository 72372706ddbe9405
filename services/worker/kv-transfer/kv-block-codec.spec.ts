import assert from "node:assert/strict";
import { Code } from "../../kernel/errors.ts";
import { decodeKvBlock, type ExpectedKvBlock, encodeKvBlock } from "./kv-block-codec.ts";
import { xxhash64 } from "./kv-checksum.ts";
import { testBlock, testFormat } from "./kv-test-blocks.ts";

describe("KV block codec", () => {
  const format = testFormat();
  const block = testBlock(format, 3);
  const expected: ExpectedKvBlock = { ...format, hash: block.hash };

  it("round-trips a block bit for bit, as a view of the buffer when it is aligned", () => {
    const buf = encodeKvBlock(block);
    const decoded = decodeKvBlock(buf, expected).value!;
    assert.deepEqual(decoded.data, block.data);
    assert.deepEqual(Array.from(decoded.tokens), Array.from(block.tokens));
    assert.equal(decoded.hash, block.hash);
    assert.deepEqual(decoded.layerRange, format.layerRange);
    assert.deepEqual(decoded.shape, format.shape);
    assert.equal(decoded.data.buffer, buf.buffer);
  });

  it("copies the payload out of a misaligned buffer", () => {
    const encoded = encodeKvBlock(block);
    const misaligned = Buffer.from(new ArrayBuffer(encoded.length + 1), 1, encoded.length);
    encoded.copy(misaligned);
    assert.deepEqual(decodeKvBlock(misaligned, expected).value?.data, block.data);
  });

  it("detects one flipped byte anywhere in the header and the payload", () => {
    const buf = encodeKvBlock(block);
    const positions = [...Array(200).keys(), buf.length - 1, buf.length - 300, Math.floor(buf.length / 2)];
    for (const at of positions) {
      const copy = Buffer.from(buf);
      copy[at] = copy[at]! ^ 0x10;
      const { value, error } = decodeKvBlock(copy, expected);
      assert.equal(value, undefined, `byte ${at}`);
      assert.ok(error !== undefined);
      assert.ok(error.code === Code.DATA_LOSS || error.code === Code.FAILED_PRECONDITION, `byte ${at}`);
    }
    const payloadFlip = Buffer.from(buf);
    payloadFlip[buf.length - 1] = payloadFlip[buf.length - 1]! ^ 1;
    assert.match(
      decodeKvBlock(payloadFlip, expected).error!.message,
      /checksum: stored [0-9a-f]{16}, computed/,
    );
  });

  it("rejects truncated buffers and foreign bytes as corrupt", () => {
    const buf = encodeKvBlock(block);
    assert.match(decodeKvBlock(buf.subarray(0, 10), expected).error!.message, /truncated: 10 bytes/);
    assert.match(decodeKvBlock(buf.subarray(0, buf.length - 4), expected).error!.message, /length/);
    const foreign = decodeKvBlock(Buffer.alloc(100, 0x41), expected).error!;
    assert.equal(foreign.code, Code.DATA_LOSS);
    assert.match(foreign.message, /magic: expected "TSKV", got "AAAA"/);
  });

  it("names what differs for a well-formed block of another model, revision, layer range, shape or hash", () => {
    const cases: [Partial<ExpectedKvBlock>, RegExp][] = [
      [{ modelId: "other" }, /model id differs: expected "other", got "tiny"/],
      [{ revision: "r2" }, /revision differs: expected "r2", got "r1"/],
      [{ layerRange: { start: 0, end: 2 } }, /layer range differs/],
      [
        { shape: { ...format.shape, kvHeads: 4 } },
        /shape differs: expected \[2,2,4,4,8\], got \[2,2,4,2,8\]/,
      ],
      [{ hash: "f".repeat(32) }, /hash differs/],
    ];
    const buf = encodeKvBlock(block);
    for (const [change, message] of cases) {
      const { value, error } = decodeKvBlock(buf, { ...expected, ...change });
      assert.equal(value, undefined);
      assert.equal(error?.code, Code.FAILED_PRECONDITION);
      assert.match(error.message, message);
    }
  });

  it("rejects another format version even when its checksum holds", () => {
    const buf = encodeKvBlock(block);
    buf.writeUInt16LE(2, 4);
    buf.writeBigUInt64LE(xxhash64(buf.subarray(0, 8), buf.subarray(16)), 8);
    assert.match(decodeKvBlock(buf, expected).error!.message, /format version differs: expected 1, got 2/);
  });

  it("refuses to encode a payload or token list that does not fit the shape", () => {
    assert.throws(
      () => encodeKvBlock({ ...block, data: new Float32Array(3) }),
      /data: 3 floats, the shape needs/,
    );
    assert.throws(() => encodeKvBlock({ ...block, tokens: [1, 2] }), /tokens: 2 tokens in a block of 4/);
  });
});

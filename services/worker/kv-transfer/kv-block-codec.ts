// The wire format of a KV block (format version 1), all integers little-endian:
//
//   0  "TSKV" magic                       20 u32 layer start        52 u16 model id bytes
//   4  u16 format version                 24 u32 layer end          54 u16 revision bytes
//   6  u8 dtype (1 = float32), u8 0       28 u32 x5 shape           56 u16 hash bytes, u16 0
//   8  u64 xxhash64 of every byte but     48 u32 token count        60 u32 payload bytes
//      these 8 (header and payload)       64 u32 x tokens, model id, revision, hash (UTF-8)
//   16 u32 header bytes (payload offset)     zero padding to a multiple of 8, then the payload
//
// The shape is [layers, 2, blockSize, kvHeads, headDim]; the payload is that many float32 (host order,
// little-endian on every platform Tessera runs on). decode() verifies everything against what the
// reader expects before it returns a block: corruption (truncation, bad magic, checksum) is DATA_LOSS,
// a well-formed block of another kind (version, model, revision, layers, shape, hash) FAILED_PRECONDITION.
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import {
  type DecodedKvBlock,
  type KvBlock,
  type KvBlockData,
  type KvBlockFormat,
  payloadDims,
  payloadFloats,
} from "./kv-block.ts";
import { xxhash64 } from "./kv-checksum.ts";

export const KV_BLOCK_MAGIC = "TSKV";
export const KV_BLOCK_FORMAT_VERSION = 1;
const DTYPE_FLOAT32 = 1;
const FIXED_BYTES = 64;

/** What a reader expects of a block: the store's format and the hash it asked for. */
export interface ExpectedKvBlock extends KvBlockFormat {
  hash: string;
}

export function encodeKvBlock(block: KvBlock): Buffer {
  return Buffer.concat([encodeKvHeader(block), payloadView(block)]);
}

/**
 * A block's header (checksum included): the value is the header followed by `payloadView(block)`,
 * which the store writes after it without copying the payload into one buffer.
 */
export function encodeKvHeader(block: KvBlock): Buffer {
  const floats = payloadFloats(block);
  if (block.data.length !== floats)
    throw TesseraError.invalidArgument("data", `${block.data.length} floats, the shape needs ${floats}`);
  if (block.tokens.length !== block.shape.blockSize)
    throw TesseraError.invalidArgument(
      "tokens",
      `${block.tokens.length} tokens in a block of ${block.shape.blockSize}`,
    );
  const strings = [block.modelId, block.revision, block.hash].map((s) => Buffer.from(s));
  if (strings.some((s) => s.length > 0xffff))
    throw TesseraError.invalidArgument("block", "an id exceeds 65535 bytes");
  const headerBytes = align8(
    FIXED_BYTES + 4 * block.tokens.length + strings.reduce((n, s) => n + s.length, 0),
  );
  const buf = Buffer.alloc(headerBytes);
  buf.write(KV_BLOCK_MAGIC, 0, "latin1");
  buf.writeUInt16LE(KV_BLOCK_FORMAT_VERSION, 4);
  buf.writeUInt8(DTYPE_FLOAT32, 6);
  buf.writeUInt32LE(headerBytes, 16);
  buf.writeUInt32LE(block.layerRange.start, 20);
  buf.writeUInt32LE(block.layerRange.end, 24);
  for (const [i, dim] of payloadDims(block).entries()) buf.writeUInt32LE(dim, 28 + 4 * i);
  buf.writeUInt32LE(block.tokens.length, 48);
  for (const [i, s] of strings.entries()) buf.writeUInt16LE(s.length, 52 + 2 * i);
  buf.writeUInt32LE(block.data.byteLength, 60);
  let offset = FIXED_BYTES;
  for (let i = 0; i < block.tokens.length; i++, offset += 4) buf.writeUInt32LE(block.tokens[i]!, offset);
  for (const s of strings) offset += s.copy(buf, offset);
  buf.writeBigUInt64LE(xxhash64(buf.subarray(0, 8), buf.subarray(16), payloadView(block)), 8);
  return buf;
}

/** The bytes of the value of a well-formed block of `format` named `hash`. */
export function kvValueBytes(format: KvBlockFormat, hash: string): number {
  const strings = [format.modelId, format.revision, hash].reduce((n, s) => n + Buffer.byteLength(s), 0);
  return align8(FIXED_BYTES + 4 * format.shape.blockSize + strings) + 4 * payloadFloats(format);
}

/** The payload's bytes: a view of the block's floats. */
export function payloadView(block: KvBlockData): Uint8Array {
  return new Uint8Array(block.data.buffer, block.data.byteOffset, block.data.byteLength);
}

/** Parses and verifies a block; never returns one whose bytes or identity were not checked. */
export function decodeKvBlock(buf: Buffer, expected: ExpectedKvBlock): Result<DecodedKvBlock> {
  const corrupt = (message: string) => ({ error: new TesseraError(Code.DATA_LOSS, `KV block ${message}`) });
  const differs = (field: string, want: unknown, got: unknown) => ({
    error: new TesseraError(
      Code.FAILED_PRECONDITION,
      `KV block ${field} differs: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`,
    ),
  });
  if (buf.length < FIXED_BYTES)
    return corrupt(`truncated: ${buf.length} bytes, the header alone takes ${FIXED_BYTES}`);
  const magic = buf.toString("latin1", 0, 4);
  if (magic !== KV_BLOCK_MAGIC)
    return corrupt(`magic: expected "${KV_BLOCK_MAGIC}", got ${JSON.stringify(magic)}`);
  const version = buf.readUInt16LE(4);
  if (version !== KV_BLOCK_FORMAT_VERSION) return differs("format version", KV_BLOCK_FORMAT_VERSION, version);
  const headerBytes = buf.readUInt32LE(16);
  const tokenCount = buf.readUInt32LE(48);
  const lengths = [0, 1, 2].map((i) => buf.readUInt16LE(52 + 2 * i));
  const payloadBytes = buf.readUInt32LE(60);
  const stringsAt = FIXED_BYTES + 4 * tokenCount;
  const needed = align8(stringsAt + lengths.reduce((a, b) => a + b, 0));
  if (headerBytes !== needed || headerBytes + payloadBytes !== buf.length)
    return corrupt(
      `length: ${buf.length} bytes, the header declares ${headerBytes} + ${payloadBytes} payload`,
    );
  const stored = buf.readBigUInt64LE(8);
  const computed = checksumOf(buf);
  if (stored !== computed) return corrupt(`checksum: stored ${hex(stored)}, computed ${hex(computed)}`);

  const [modelId, revision, hash] = readStrings(buf, stringsAt, lengths);
  const dtype = buf.readUInt8(6);
  if (dtype !== DTYPE_FLOAT32) return differs("dtype", "float32", `code ${dtype}`);
  if (modelId !== expected.modelId) return differs("model id", expected.modelId, modelId);
  if (revision !== expected.revision) return differs("revision", expected.revision, revision);
  const layerRange = { start: buf.readUInt32LE(20), end: buf.readUInt32LE(24) };
  if (layerRange.start !== expected.layerRange.start || layerRange.end !== expected.layerRange.end)
    return differs("layer range", expected.layerRange, layerRange);
  const dims = [0, 1, 2, 3, 4].map((i) => buf.readUInt32LE(28 + 4 * i));
  const want = payloadDims(expected);
  if (dims.some((d, i) => d !== want[i])) return differs("shape", want, dims);
  if (hash !== expected.hash) return differs("hash", expected.hash, hash);
  if (tokenCount !== expected.shape.blockSize)
    return differs("token count", expected.shape.blockSize, tokenCount);
  if (payloadBytes !== 4 * payloadFloats(expected))
    return differs("payload bytes", 4 * payloadFloats(expected), payloadBytes);

  const tokens = new Uint32Array(tokenCount);
  for (let i = 0; i < tokenCount; i++) tokens[i] = buf.readUInt32LE(FIXED_BYTES + 4 * i);
  const shape = { blockSize: dims[2]!, kvHeads: dims[3]!, headDim: dims[4]! };
  return {
    value: {
      modelId,
      revision,
      layerRange,
      shape,
      hash,
      tokens,
      data: floatsAt(buf, headerBytes, payloadBytes),
    },
  };
}

/** xxhash64 of the whole buffer but the checksum field itself. */
function checksumOf(buf: Buffer): bigint {
  return xxhash64(buf.subarray(0, 8), buf.subarray(16));
}

function readStrings(buf: Buffer, at: number, lengths: number[]): string[] {
  let offset = at;
  return lengths.map((length) => {
    const s = buf.toString("utf8", offset, offset + length);
    offset += length;
    return s;
  });
}

/** The payload as float32: a view when the reply's memory is 4-byte aligned, else a copy. */
function floatsAt(buf: Buffer, offset: number, bytes: number): Float32Array {
  const start = buf.byteOffset + offset;
  if (start % 4 === 0) return new Float32Array(buf.buffer, start, bytes / 4);
  return new Float32Array(new Uint8Array(buf.buffer, start, bytes).slice().buffer);
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

function hex(n: bigint): string {
  return n.toString(16).padStart(16, "0");
}

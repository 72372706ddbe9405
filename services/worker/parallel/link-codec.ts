// The ShardLink messages' serializer. A frame that carries a tensor (hidden states, an all-reduce part,
// logits, KV blocks) is written straight into one buffer of its exact size: the message without the
// tensor's bytes (protobuf-es), then the bytes field appended with its length prefixes. Field order
// does not matter to a protobuf parser, so the peer reads it with the generated code like any other.
// protobuf-es alone would grow its buffer by doubling (zero-filled), shift the payload once per level of
// nesting when it writes the length prefixes, then copy it out: on a last stage's 64 KiB of logits per
// step that churn of short-lived buffers kept the member's garbage collector busy.
import { type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";
import type { MethodDefinition } from "@grpc/grpc-js";
import {
  KvImportSchema,
  KvReplySchema,
  type LinkRequest,
  LinkRequestSchema,
  type LinkResponse,
  LinkResponseSchema,
  LogitsSliceSchema,
  ReducePartSchema,
  ShardLink,
  StageActivationSchema,
} from "../../../proto/gen/tessera/v1/shard_pb.js";
import { grpcMethodDefinition } from "../../rpc/grpc-service.ts";
import { asBuffer } from "../../rpc/stream-codecs.ts";

/** Frame kinds that carry a tensor: their ShardFrame field, message and bytes field (all numbered below 16). */
const TENSORS: Record<string, { frameField: number; schema: DescMessage; field: string; number: number }> = {
  activation: { frameField: 5, schema: StageActivationSchema, field: "hidden", number: 2 },
  reduce: { frameField: 6, schema: ReducePartSchema, field: "data", number: 4 },
  logits: { frameField: 7, schema: LogitsSliceSchema, field: "data", number: 4 },
  kvImport: { frameField: 9, schema: KvImportSchema, field: "data", number: 3 },
  kvReply: { frameField: 10, schema: KvReplySchema, field: "data", number: 2 },
};

/** Below this many tensor bytes protobuf-es writes the frame as it is. */
const DIRECT_BYTES = 1024;
const NO_BYTES = new Uint8Array(0);

/** The wire bytes of a LinkRequest or LinkResponse (field 1: the frame). */
export function encodeLinkMessage(schema: DescMessage, message: LinkRequest | LinkResponse): Buffer {
  const kind = message.frame?.kind;
  const tensor = kind?.case === undefined ? undefined : TENSORS[kind.case];
  const value = kind?.value as Record<string, unknown> | undefined;
  const bytes = tensor && (value?.[tensor.field] as Uint8Array | undefined);
  if (!tensor || !bytes || bytes.byteLength < DIRECT_BYTES)
    return asBuffer(toBinary(schema, message as MessageShape<DescMessage>));
  const rest = toBinary(tensor.schema, { ...value, [tensor.field]: NO_BYTES } as MessageShape<DescMessage>);
  const innerLen = rest.length + 1 + varintLength(bytes.byteLength) + bytes.byteLength;
  const frameLen = 1 + varintLength(innerLen) + innerLen;
  const out = Buffer.allocUnsafe(1 + varintLength(frameLen) + frameLen);
  let at = writeHeader(out, 0, 1, frameLen);
  at = writeHeader(out, at, tensor.frameField, innerLen);
  out.set(rest, at);
  at = writeHeader(out, at + rest.length, tensor.number, bytes.byteLength);
  out.set(bytes, at);
  return out;
}

/** ShardLink.Link with this serializer on both sides. */
export const LINK_METHOD: MethodDefinition<LinkRequest, LinkResponse> = {
  ...grpcMethodDefinition(ShardLink.method.link),
  requestSerialize: (m) => encodeLinkMessage(LinkRequestSchema, m),
  responseSerialize: (m) => encodeLinkMessage(LinkResponseSchema, m),
};

/** A length-delimited field's tag (field number below 16: one byte) and length; returns the next offset. */
function writeHeader(out: Buffer, at: number, field: number, length: number): number {
  out[at++] = (field << 3) | 2;
  let n = length;
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[at++] = n;
  return at;
}

function varintLength(n: number): number {
  let length = 1;
  for (let v = n; v >= 0x80; v = Math.floor(v / 128)) length++;
  return length;
}

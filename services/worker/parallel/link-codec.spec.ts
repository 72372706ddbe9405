// The link serializer writes tensor frames itself: the generated parser must read back the same frame.
import assert from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  LinkRequestSchema,
  LinkResponseSchema,
  type ShardFrame,
} from "../../../proto/gen/tessera/v1/shard_pb.js";
import { encodeLinkMessage } from "./link-codec.ts";
import type { OutgoingFrame } from "./peer-link.ts";

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) % 256);
const batch = {
  stepId: 1n << 40n,
  microBatch: 1,
  sequences: [{ numPast: 300, numNew: 1, blockTable: [5, 1, 200], needsLogits: true }],
};

const FRAMES: OutgoingFrame[] = [
  { case: "activation", value: { batch, hidden: bytes(256 * 1024 + 3) } },
  { case: "reduce", value: { stepId: 9n, microBatch: 0, segment: 7, data: bytes(4096) } },
  { case: "logits", value: { stepId: 3n, microBatch: 2, tensorRank: 1, data: bytes(65536) } },
  { case: "kvImport", value: { requestId: 4n, blocks: [1, 2, 3], data: bytes(200_000) } },
  { case: "kvReply", value: { requestId: 5n, data: bytes(2048) } },
  { case: "kvReply", value: { requestId: 6n, error: "no block 9" } },
  { case: "logits", value: { stepId: 3n, microBatch: 0, tensorRank: 0, data: bytes(16) } },
  { case: "failure", value: { reason: "gone" } },
];

describe("link codec", () => {
  for (const schema of [LinkRequestSchema, LinkResponseSchema])
    for (const kind of FRAMES)
      it(`${schema.typeName}: a ${kind.case} frame reads back as written`, () => {
        const message = create(schema, { frame: { kind } });
        const wire = encodeLinkMessage(schema, message);
        const back = fromBinary(schema, new Uint8Array(wire.buffer, wire.byteOffset, wire.byteLength));
        assert.deepEqual(back, fromBinary(schema, toBinary(schema, message)));
        assert.equal((back.frame as ShardFrame).kind.case, kind.case);
      });
});

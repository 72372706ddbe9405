import assert from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ShardFrameSchema } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { bytesToFloats, floatBytes, sequencesFromWire, sequencesToWire } from "./frame-codec.ts";

describe("frame codec", () => {
  it("round-trips a step's sequences and hidden states through a binary frame", () => {
    const seqs = [
      { numPast: 0, numNew: 5, blockTable: [3, 1], needsLogits: false },
      { numPast: 40, numNew: 1, blockTable: [7, 8, 9], needsLogits: true },
    ];
    const hidden = Float32Array.from({ length: 6 }, (_, i) => i / 7 - 0.25);
    const frame = create(ShardFrameSchema, {
      kind: {
        case: "activation",
        value: {
          batch: { stepId: 9n, microBatch: 1, sequences: sequencesToWire(seqs) },
          hidden: floatBytes(hidden),
        },
      },
    });
    const back = fromBinary(ShardFrameSchema, toBinary(ShardFrameSchema, frame));
    assert.equal(back.kind.case, "activation");
    if (back.kind.case !== "activation") return;
    assert.deepEqual(sequencesFromWire(back.kind.value.batch!.sequences), seqs);
    assert.deepEqual(bytesToFloats(back.kind.value.hidden), hidden);
  });

  it("copies unaligned bytes into a float array of its own", () => {
    const source = new Uint8Array(9);
    source.set(floatBytes(Float32Array.of(1.5, -2)), 1);
    assert.deepEqual([...bytesToFloats(source.subarray(1))], [1.5, -2]);
    assert.throws(() => bytesToFloats(new Uint8Array(3)), /not float32/);
  });
});

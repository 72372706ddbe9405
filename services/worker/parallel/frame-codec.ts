// Conversions between the engine's values and ShardLink frames (proto/tessera/v1/shard.proto): a
// step's sequences, and float32 tensors as raw little-endian bytes (no JSON, no per-element encoding).
import type { SequenceStep as WireSequence } from "../../../proto/gen/tessera/v1/shard_pb.js";
import type { SequenceStep } from "../runtime/step-inputs.ts";

export function sequencesToWire(seqs: readonly SequenceStep[]): Omit<WireSequence, "$typeName">[] {
  return seqs.map((s) => ({
    numPast: s.numPast,
    numNew: s.numNew,
    blockTable: s.blockTable,
    needsLogits: s.needsLogits,
  }));
}

export function sequencesFromWire(seqs: readonly WireSequence[]): SequenceStep[] {
  return seqs.map((s) => ({
    numPast: s.numPast,
    numNew: s.numNew,
    blockTable: [...s.blockTable],
    needsLogits: s.needsLogits,
  }));
}

/** The bytes of a float32 tensor (a view, no copy; machines are little-endian like the format). */
export function floatBytes(data: Float32Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** A float32 tensor from received bytes (copied: the bytes may not be 4-byte aligned, and the copy owns its buffer). */
export function bytesToFloats(bytes: Uint8Array): Float32Array {
  if (bytes.byteLength % 4 !== 0) throw new Error(`${bytes.byteLength} bytes are not float32 values`);
  const out = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

// Conversions between the engine's values and ShardLink frames (proto/tessera/v1/shard.proto): a
// step's sequences (with how to sample them), sampled tokens, and float32 tensors as raw little-endian
// bytes (no JSON, no per-element encoding).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  SampledTokenSchema,
  SequenceStepSchema,
  RowSampling as WireRowSampling,
  SampledToken as WireSampledToken,
  SequenceStep as WireSequence,
} from "../../../proto/gen/tessera/v1/shard_pb.js";
import type { SampledRow } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import type { RowSampling } from "../sampling/sampler.ts";

/** The sequences of a batch; `withSampling` false leaves their RowSampling out (for a member that never samples). */
export function sequencesToWire(
  seqs: readonly SequenceStep[],
  withSampling = true,
): MessageInitShape<typeof SequenceStepSchema>[] {
  return seqs.map((s) => ({
    numPast: s.numPast,
    numNew: s.numNew,
    blockTable: s.blockTable,
    needsLogits: s.needsLogits,
    promptLength: s.promptLength ?? 0,
    numLogits: s.numLogits ?? 0,
    promptLogits: s.promptLogits === true,
    ...(withSampling && s.sampling && { sampling: rowSamplingToWire(s.sampling) }),
  }));
}

export function sequencesFromWire(seqs: readonly WireSequence[]): SequenceStep[] {
  return seqs.map((s) => ({
    numPast: s.numPast,
    numNew: s.numNew,
    blockTable: [...s.blockTable],
    needsLogits: s.needsLogits,
    ...(s.promptLength > 0 && { promptLength: s.promptLength }),
    ...(s.numLogits > 1 && { numLogits: s.numLogits }),
    ...(s.promptLogits && { promptLogits: true }),
    ...(s.sampling && { sampling: rowSamplingFromWire(s.sampling) }),
  }));
}

function rowSamplingToWire(r: RowSampling): Omit<WireRowSampling, "$typeName"> {
  return {
    temperature: r.temperature,
    topK: r.topK,
    topP: r.topP,
    minP: r.minP,
    logprobs: r.logprobs,
    draw: r.draw,
    repetition: r.repetition,
    presence: r.presence,
    frequency: r.frequency,
    penaltyIds: Array.from(r.penaltyIds),
    penaltyCounts: Array.from(r.penaltyCounts),
    heldBackIds: Array.from(r.heldBackIds),
    allowedTokens: r.allowed
      ? new Uint8Array(r.allowed.buffer, r.allowed.byteOffset, r.allowed.byteLength)
      : new Uint8Array(0),
    biasIds: Array.from(r.biasIds),
    biasValues: Array.from(r.biasValues),
  };
}

function rowSamplingFromWire(w: WireRowSampling): RowSampling {
  return {
    temperature: w.temperature,
    topK: w.topK,
    topP: w.topP,
    minP: w.minP,
    logprobs: w.logprobs,
    draw: w.draw,
    repetition: w.repetition,
    presence: w.presence,
    frequency: w.frequency,
    penaltyIds: Int32Array.from(w.penaltyIds),
    penaltyCounts: Int32Array.from(w.penaltyCounts),
    heldBackIds: Int32Array.from(w.heldBackIds),
    ...(w.allowedTokens.byteLength > 0 && { allowed: bytesToWords(w.allowedTokens) }),
    biasIds: Int32Array.from(w.biasIds),
    biasValues: Float32Array.from(w.biasValues),
  };
}

/** A received bitmask as 32-bit words (copied: the bytes may not be 4-byte aligned). */
function bytesToWords(bytes: Uint8Array): Int32Array {
  if (bytes.byteLength % 4 !== 0) throw new Error(`${bytes.byteLength} bytes are not a token bitmask`);
  const out = new Int32Array(bytes.byteLength / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

export function sampledToWire(rows: readonly SampledRow[]): MessageInitShape<typeof SampledTokenSchema>[] {
  return rows.map((r) =>
    "error" in r
      ? { error: r.error }
      : {
          tokenId: r.tokenId,
          logprob: r.logprob,
          topIds: r.top.map((t) => t.tokenId),
          topLogprobs: r.top.map((t) => t.logprob),
        },
  );
}

export function sampledFromWire(rows: readonly WireSampledToken[]): SampledRow[] {
  return rows.map((r) =>
    r.error
      ? { error: r.error }
      : {
          tokenId: r.tokenId,
          logprob: r.logprob,
          top: r.topIds.map((tokenId, i) => ({ tokenId, logprob: r.topLogprobs[i]! })),
        },
  );
}

/** What a SampledTokens frame carries, in bytes: ids (4) and logprobs (8), the chosen token's and the alternatives'. */
export function sampledBytes(rows: readonly SampledRow[]): number {
  let bytes = 0;
  for (const r of rows) bytes += "error" in r ? r.error.length : 12 * (1 + r.top.length);
  return bytes;
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

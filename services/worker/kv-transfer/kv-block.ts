// A KV block as it leaves or enters the engine: for layers [start, end) of one model revision, the
// keys then the values of the block's `blockSize` tokens, as one Float32Array laid out
// [layers][2][blockSize][kvHeads][headDim] (token-major, as in the engine's pool). A full block is
// named by its hash chain (services/inference/block-hash.ts), and carries its token ids so that a reader
// can confirm a hit against the tokens before trusting it.
import type { BlockHash } from "../../inference/block-hash.ts";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";

/** Layers [start, end) of the model. */
export interface KvLayerRange {
  start: number;
  end: number;
}

export interface KvBlockShape {
  blockSize: number;
  kvHeads: number;
  headDim: number;
}

/** What every block of one store shares: the model revision, the layers it holds and its shape. */
export interface KvBlockFormat {
  modelId: string;
  revision: string;
  layerRange: KvLayerRange;
  shape: KvBlockShape;
}

/** One block's own content. */
export interface KvBlockData {
  hash: BlockHash;
  tokens: ArrayLike<number>;
  data: Float32Array;
}

/** A block with its format, as the codec writes and reads it. */
export interface KvBlock extends KvBlockFormat, KvBlockData {}

/** A decoded (verified) block: token ids come back as a Uint32Array. */
export interface DecodedKvBlock extends KvBlock {
  tokens: Uint32Array;
}

/** The payload's dimensions: [layers, 2 (keys, values), blockSize, kvHeads, headDim]. */
export function payloadDims(format: KvBlockFormat): [number, number, number, number, number] {
  const { layerRange, shape } = format;
  return [layerRange.end - layerRange.start, 2, shape.blockSize, shape.kvHeads, shape.headDim];
}

export function payloadFloats(format: KvBlockFormat): number {
  return payloadDims(format).reduce((a, b) => a * b, 1);
}

/** Checks a format's fields: non-empty ids, 0 <= start < end, positive integer dimensions. */
export function validateFormat(format: KvBlockFormat): Result<KvBlockFormat> {
  const invalid = (field: string, message: string) => ({
    error: new TesseraError(Code.INVALID_ARGUMENT, `KV block format ${field}: ${message}`),
  });
  if (format.modelId === "") return invalid("modelId", "must not be empty");
  if (format.revision === "") return invalid("revision", "must not be empty");
  const { start, end } = format.layerRange;
  if (!Number.isInteger(start) || start < 0 || !Number.isInteger(end) || end <= start)
    return invalid("layerRange", `[${start}, ${end}) is not a non-empty range of layers`);
  for (const [name, value] of Object.entries(format.shape)) {
    if (!Number.isInteger(value) || value < 1)
      return invalid(`shape.${name}`, `${value} is not a positive integer`);
  }
  return { value: format };
}

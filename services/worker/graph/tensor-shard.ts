// What a tensor-parallel rank holds of each layer: a contiguous block of query heads with the KV heads
// they attend with (so grouped-query attention stays local to the rank), a range of the MLP's
// intermediate columns (each expert's too), and a range of the vocabulary for the LM head.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import { evenPart } from "../model/tensor-slice.ts";

/** A tensor-parallel rank: its index in the group and the group's size. */
export interface TensorShard {
  rank: number;
  size: number;
}

/** The query and KV heads, intermediate columns and vocabulary rows a rank holds. */
export function shardRanges(c: DecoderConfig, shard: TensorShard | undefined) {
  const { rank, size } = shard ?? { rank: 0, size: 1 };
  const heads = c.numHeads / size;
  const kvHeads = c.numKvHeads / size;
  return {
    heads,
    kvHeads,
    q: { start: rank * heads * c.headDim, end: (rank + 1) * heads * c.headDim },
    kv: { start: rank * kvHeads * c.headDim, end: (rank + 1) * kvHeads * c.headDim },
    inner: evenPart(c.intermediateSize, size, rank),
    vocab: evenPart(c.vocabSize, size, rank),
  };
}

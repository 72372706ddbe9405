// The KV pool of a model thread (one [slots, kvHeads, headDim] array per layer for keys and for values,
// slot = block * blockSize + offset; see docs/engine-memory-layout.md) and the copies in and out of it:
// the new tokens' K/V after a run, and whole blocks for export and import.
import type { DecoderConfig } from "../arch/decoder-config.ts";

export interface KvPool {
  keys: Float32Array[];
  values: Float32Array[];
}

export function allocateKvPool(
  config: Pick<DecoderConfig, "numLayers" | "numKvHeads" | "headDim">,
  numBlocks: number,
  blockSize: number,
): KvPool {
  const size = numBlocks * blockSize * config.numKvHeads * config.headDim;
  const layers = () => Array.from({ length: config.numLayers }, () => new Float32Array(size));
  return { keys: layers(), values: layers() };
}

/** Writes each new token's `width` floats into its pool slot. */
export function writeSlots(pool: Float32Array, values: Float32Array, slots: Int32Array, width: number): void {
  for (let t = 0; t < slots.length; t++)
    pool.set(values.subarray(t * width, (t + 1) * width), slots[t]! * width);
}

/** Copies blocks out of the pool, block after block, each [layer][key|value][token][kvHead][dim]. */
export function exportPoolBlocks(pool: KvPool, blocks: readonly number[], span: number): Float32Array {
  const layers = pool.keys.length;
  const out = new Float32Array(blocks.length * layers * 2 * span);
  let at = 0;
  for (const b of blocks) {
    for (let l = 0; l < layers; l++) {
      out.set(pool.keys[l]!.subarray(b * span, (b + 1) * span), at);
      out.set(pool.values[l]!.subarray(b * span, (b + 1) * span), at + span);
      at += 2 * span;
    }
  }
  return out;
}

/** Writes blocks laid out as exportPoolBlocks returns them into the pool. */
export function importPoolBlocks(
  pool: KvPool,
  blocks: readonly number[],
  data: Float32Array,
  span: number,
): void {
  let at = 0;
  for (const b of blocks) {
    for (let l = 0; l < pool.keys.length; l++) {
      pool.keys[l]!.set(data.subarray(at, at + span), b * span);
      pool.values[l]!.set(data.subarray(at + span, at + 2 * span), b * span);
      at += 2 * span;
    }
  }
}

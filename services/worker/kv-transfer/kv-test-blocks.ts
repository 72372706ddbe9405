// Builders of KV blocks for tests and benchmarks: a format and chains of blocks with deterministic
// contents and real hash chains (services/inference/block-hash.ts).
import { blockHash } from "../../inference/block-hash.ts";
import { type KvBlock, type KvBlockFormat, payloadFloats } from "./kv-block.ts";

/** A tiny format (layers 2-4 of model "tiny"@"r1", blocks of 4 tokens, 2 KV heads of 8) unless told. */
export function testFormat(overrides: Partial<KvBlockFormat> = {}): KvBlockFormat {
  return {
    modelId: "tiny",
    revision: "r1",
    layerRange: { start: 2, end: 4 },
    shape: { blockSize: 4, kvHeads: 2, headDim: 8 },
    ...overrides,
  };
}

/** The `base` preset's full block: 12 layers, 16 tokens, 4 KV heads of 64 (384 KiB of float32). */
export function baseFormat(): KvBlockFormat {
  return {
    modelId: "base",
    revision: "main",
    layerRange: { start: 0, end: 12 },
    shape: { blockSize: 16, kvHeads: 4, headDim: 64 },
  };
}

/** Block `index` of a chain (its parent is block index - 1), filled with values derived from `seed`. */
export function testBlock(format: KvBlockFormat, index: number, seed = 1): KvBlock {
  return testBlocks(format, index + 1, seed)[index]!;
}

/** `count` chained blocks. */
export function testBlocks(format: KvBlockFormat, count: number, seed = 1): KvBlock[] {
  const salt = `${format.modelId}@${format.revision}`;
  const blocks: KvBlock[] = [];
  let parent: string | undefined;
  for (let b = 0; b < count; b++) {
    const tokens = Array.from(
      { length: format.shape.blockSize },
      (_, t) => (seed * 7919 + b * 31 + t) % 50_000,
    );
    const data = new Float32Array(payloadFloats(format));
    for (let i = 0; i < data.length; i++) data[i] = Math.sin(seed + b * 0.37 + i * 0.011);
    parent = blockHash(parent, tokens, salt);
    blocks.push({ ...format, hash: parent, tokens, data });
  }
  return blocks;
}

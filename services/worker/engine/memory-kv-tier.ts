// A remote KV tier held in this process's memory: the tier a single-process deployment (or a test of
// two engines in one process) can share without Redis. Same contract as the Redis tier: blocks by hash,
// confirmed against their tokens.
import type { BlockHash } from "../../inference/block-hash.ts";
import type { RemoteBlockRef, RemoteKvTier } from "./remote-kv.ts";

export class MemoryKvTier implements RemoteKvTier {
  private readonly blocks = new Map<BlockHash, { tokens: number[]; data: Float32Array }>();
  puts = 0;
  gets = 0;

  async putBlocks(blocks: (RemoteBlockRef & { data: Float32Array })[]): Promise<void> {
    this.puts += blocks.length;
    for (const b of blocks) this.blocks.set(b.hash, { tokens: [...b.tokens], data: b.data.slice() });
  }

  async readBlocks(
    blocks: RemoteBlockRef[],
    use: (index: number, data: Float32Array) => void,
  ): Promise<void> {
    this.gets += blocks.length;
    for (const [i, ref] of blocks.entries()) {
      const b = this.blocks.get(ref.hash);
      const same =
        b && b.tokens.length === ref.tokens.length && b.tokens.every((t, i) => t === ref.tokens[i]);
      if (same) use(i, b.data);
    }
  }

  get size(): number {
    return this.blocks.size;
  }

  /** Drops every block (a tier that lost its data). */
  clear(): void {
    this.blocks.clear();
  }
}

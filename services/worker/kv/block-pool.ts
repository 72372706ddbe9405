// The pool of fixed-size KV blocks: owns the free list, the hash -> block map of cached full blocks,
// and reference counts. A block whose count drops to zero goes to the tail of the free list but keeps
// its hash, so a later request with the same prefix can take it back (a prefix-cache hit). Allocation
// takes from the head, evicting the least recently freed cached block first (LRU).
// Only metadata lives here; the K/V numbers live in the model thread, addressed by block id.
import type { BlockHash } from "../../inference/block-hash.ts";

interface BlockMeta {
  refCount: number;
  /** Set once the block is full and registered in the prefix cache. */
  hash: BlockHash | undefined;
  tokens: number[] | undefined;
}

export class BlockPool {
  readonly numBlocks: number;
  readonly blockSize: number;
  private readonly blocks: BlockMeta[];
  /** Free blocks in eviction order (Map keeps insertion order: the first key is evicted first). */
  private readonly free = new Map<number, true>();
  private readonly cached = new Map<BlockHash, number>();
  private cacheQueries = 0;
  private cacheHits = 0;

  constructor(numBlocks: number, blockSize: number) {
    this.numBlocks = numBlocks;
    this.blockSize = blockSize;
    this.blocks = Array.from({ length: numBlocks }, () => ({
      refCount: 0,
      hash: undefined,
      tokens: undefined,
    }));
    for (let id = 0; id < numBlocks; id++) this.free.set(id, true);
  }

  get numFree(): number {
    return this.free.size;
  }

  get numUsed(): number {
    return this.numBlocks - this.free.size;
  }

  get prefixCacheStats(): { queries: number; hits: number } {
    return { queries: this.cacheQueries, hits: this.cacheHits };
  }

  refCount(id: number): number {
    return this.blocks[id]!.refCount;
  }

  /** Looks a full block up by hash; a hit must also hold exactly `tokens`. Does not take a reference. */
  lookup(hash: BlockHash, tokens: readonly number[]): number | undefined {
    this.cacheQueries++;
    const id = this.cached.get(hash);
    if (id === undefined) return undefined;
    const stored = this.blocks[id]!.tokens!;
    if (stored.length !== tokens.length || stored.some((t, i) => t !== tokens[i])) return undefined;
    this.cacheHits++;
    return id;
  }

  /** Takes a reference on blocks found by `lookup` (removing them from the free list if idle). */
  acquire(ids: readonly number[]): void {
    for (const id of ids) {
      const b = this.blocks[id]!;
      if (b.refCount++ === 0) this.free.delete(id);
    }
  }

  /** `n` fresh blocks with one reference each, or undefined (and no change) when too few are free. */
  allocate(n: number): number[] | undefined {
    if (n > this.free.size) return undefined;
    const ids: number[] = [];
    for (const id of this.free.keys()) {
      if (ids.length === n) break;
      ids.push(id);
    }
    for (const id of ids) {
      this.free.delete(id);
      const b = this.blocks[id]!;
      if (b.hash !== undefined) this.cached.delete(b.hash);
      b.hash = undefined;
      b.tokens = undefined;
      b.refCount = 1;
    }
    return ids;
  }

  /** Drops one reference from each block; idle blocks go to the free list, most recent last. */
  release(ids: readonly number[]): void {
    // Blocks at the end of a sequence are the least likely to be shared: free them first (evicted first).
    for (let i = ids.length - 1; i >= 0; i--) {
      const id = ids[i]!;
      const b = this.blocks[id]!;
      if (b.refCount <= 0) throw new Error(`block ${id} released more often than acquired`);
      if (--b.refCount === 0) this.free.set(id, true);
    }
  }

  /** Registers a full block in the prefix cache (first writer wins when two compute the same block). */
  cacheBlock(id: number, hash: BlockHash, tokens: readonly number[]): void {
    const b = this.blocks[id]!;
    if (b.hash !== undefined || this.cached.has(hash)) return;
    b.hash = hash;
    b.tokens = [...tokens];
    this.cached.set(hash, id);
  }

  /** Consistency of the bookkeeping, for tests: throws on the first broken invariant. */
  checkInvariants(): void {
    let idle = 0;
    for (const [id, b] of this.blocks.entries()) {
      if (b.refCount < 0) throw new Error(`block ${id} has a negative reference count`);
      if ((b.refCount === 0) !== this.free.has(id))
        throw new Error(`block ${id}: free list disagrees with refCount`);
      if (b.refCount === 0) idle++;
      if (b.hash !== undefined && this.cached.get(b.hash) !== id)
        throw new Error(`block ${id}: hash map disagrees`);
    }
    if (idle !== this.free.size) throw new Error("free list holds unknown blocks");
  }
}

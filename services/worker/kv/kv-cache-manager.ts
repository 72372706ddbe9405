// Per-request KV blocks on top of the block pool: prefix lookup when a request is scheduled, slot
// allocation as its tokens are computed, registration of blocks that became full, and release.
// Running out of blocks is a return value (false), not an exception: the scheduler preempts and retries.
import { type BlockHash, blockHash } from "../../inference/block-hash.ts";
import type { BlockPool } from "./block-pool.ts";

/** The KV state a request carries (owned by the manager, stored on the request). */
export interface RequestKv {
  /** Block ids in sequence order: block i holds tokens [i*blockSize, (i+1)*blockSize). */
  blocks: number[];
  /** Hashes of the leading blocks known to be full and computed (registered in the cache). */
  hashes: BlockHash[];
}

export function emptyRequestKv(): RequestKv {
  return { blocks: [], hashes: [] };
}

export class KvCacheManager {
  readonly pool: BlockPool;
  readonly enablePrefixCaching: boolean;
  private readonly salt: string;

  constructor(pool: BlockPool, salt: string, enablePrefixCaching = true) {
    this.pool = pool;
    this.salt = salt;
    this.enablePrefixCaching = enablePrefixCaching;
  }

  get blockSize(): number {
    return this.pool.blockSize;
  }

  /** Distinct blocks its requests may hold: the whole pool (a virtual engine's KvShare holds less). */
  get capacity(): number {
    return this.pool.numBlocks;
  }

  /**
   * The longest run of cached full blocks that starts `tokens`, as block ids and hashes (no references
   * taken). At least one token is always left to compute, so the last block of a fully cached
   * sequence is not reused: the step needs a token to produce logits from.
   */
  findCachedPrefix(tokens: readonly number[]): { blocks: number[]; hashes: BlockHash[] } {
    const found = { blocks: [] as number[], hashes: [] as BlockHash[] };
    if (!this.enablePrefixCaching) return found;
    const bs = this.blockSize;
    const maxBlocks = Math.floor((tokens.length - 1) / bs);
    let parent: BlockHash | undefined;
    for (let i = 0; i < maxBlocks; i++) {
      const blockTokens = tokens.slice(i * bs, (i + 1) * bs);
      parent = blockHash(parent, blockTokens, this.salt);
      const id = this.pool.lookup(parent, blockTokens);
      if (id === undefined) break;
      found.blocks.push(id);
      found.hashes.push(parent);
    }
    return found;
  }

  /** Number of new blocks a request needs to hold `totalTokens` tokens. */
  blocksNeeded(kv: RequestKv, totalTokens: number, cachedBlocks = 0): number {
    return Math.max(0, Math.ceil(totalTokens / this.blockSize) - kv.blocks.length - cachedBlocks);
  }

  /**
   * Gives the request room for `totalTokens` tokens: first the cached prefix blocks found by
   * `findCachedPrefix` (only on a request holding no blocks), then fresh blocks. False when the pool has
   * too few free blocks; the request is then left unchanged.
   */
  allocate(kv: RequestKv, totalTokens: number, cached?: { blocks: number[]; hashes: BlockHash[] }): boolean {
    const reuse = kv.blocks.length === 0 && cached ? cached : { blocks: [], hashes: [] };
    // Reusing idle cached blocks takes them off the free list, so count them against it.
    const idleReused = reuse.blocks.filter((id) => this.pool.refCount(id) === 0).length;
    const fresh = this.blocksNeeded(kv, totalTokens, reuse.blocks.length);
    if (fresh + idleReused > this.pool.numFree) return false;
    this.pool.acquire(reuse.blocks);
    kv.blocks.push(...reuse.blocks);
    kv.hashes.push(...reuse.hashes);
    if (fresh > 0) kv.blocks.push(...this.pool.allocate(fresh)!);
    return true;
  }

  /** Registers the blocks that `numComputed` computed tokens have filled, so later requests can share them. */
  cacheComputedBlocks(kv: RequestKv, tokens: readonly number[], numComputed: number): void {
    if (!this.enablePrefixCaching) return;
    const bs = this.blockSize;
    const full = Math.floor(numComputed / bs);
    for (let i = kv.hashes.length; i < full; i++) {
      const blockTokens = tokens.slice(i * bs, (i + 1) * bs);
      const hash = blockHash(kv.hashes[i - 1], blockTokens, this.salt);
      kv.hashes.push(hash);
      this.pool.cacheBlock(kv.blocks[i]!, hash, blockTokens);
    }
  }

  /**
   * Releases the blocks past those `totalTokens` tokens need (a speculative step's rejected proposals:
   * their slots were written but hold nothing the request keeps). Registered blocks are never past them.
   */
  trim(kv: RequestKv, totalTokens: number): void {
    const keep = Math.ceil(totalTokens / this.blockSize);
    if (kv.blocks.length <= keep) return;
    this.pool.release(kv.blocks.splice(keep));
  }

  /** Releases every block of the request (finished, cancelled or preempted). */
  free(kv: RequestKv): void {
    this.pool.release(kv.blocks);
    kv.blocks = [];
    kv.hashes = [];
  }
}

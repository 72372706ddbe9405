// One virtual engine's share of a KV pool that several virtual engines use at once (virtual-engines.ts).
// The pool and its prefix cache stay shared: a block any engine computed and registered is a hit for
// all of them, and cached blocks are full and read-only, so engines may hold one block together. Each
// engine may hold at most `capacity` distinct blocks; as the shares add up to the pool, an engine
// within its share always finds free blocks, whatever the others hold (a block held by two engines
// counts against both). Past its share an engine preempts its own requests, as a single engine does
// when its pool is full, and never takes blocks another engine's step in flight is using.
import type { BlockHash } from "../../inference/block-hash.ts";
import type { BlockPool } from "../kv/block-pool.ts";
import { KvCacheManager, type RequestKv } from "../kv/kv-cache-manager.ts";

export class KvShare extends KvCacheManager {
  readonly #capacity: number;
  /** References this engine's requests hold, by block id. */
  private readonly held = new Map<number, number>();

  constructor(pool: BlockPool, salt: string, enablePrefixCaching: boolean, capacity: number) {
    super(pool, salt, enablePrefixCaching);
    this.#capacity = capacity;
  }

  /** Distinct blocks this engine may hold. */
  override get capacity(): number {
    return this.#capacity;
  }

  /** Distinct blocks this engine holds. */
  get numHeld(): number {
    return this.held.size;
  }

  override allocate(
    kv: RequestKv,
    totalTokens: number,
    cached?: { blocks: number[]; hashes: BlockHash[] },
  ): boolean {
    const reuse = kv.blocks.length === 0 && cached ? cached.blocks : [];
    const fresh = this.blocksNeeded(kv, totalTokens, reuse.length);
    const newlyHeld = fresh + reuse.filter((id) => !this.held.has(id)).length;
    if (this.held.size + newlyHeld > this.capacity) return false;
    const before = kv.blocks.length;
    if (!super.allocate(kv, totalTokens, cached)) return false;
    for (let i = before; i < kv.blocks.length; i++) {
      const id = kv.blocks[i]!;
      this.held.set(id, (this.held.get(id) ?? 0) + 1);
    }
    return true;
  }

  override free(kv: RequestKv): void {
    this.unhold(kv.blocks);
    super.free(kv);
  }

  override trim(kv: RequestKv, totalTokens: number): void {
    this.unhold(kv.blocks.slice(Math.ceil(totalTokens / this.blockSize)));
    super.trim(kv, totalTokens);
  }

  private unhold(ids: readonly number[]): void {
    for (const id of ids) {
      const n = this.held.get(id) ?? 0;
      if (n <= 1) this.held.delete(id);
      else this.held.set(id, n - 1);
    }
  }
}

/** `numBlocks` split into `n` shares that add up to it (the first ones one larger when it does not divide). */
export function splitBlocks(numBlocks: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(numBlocks / n) + (i < numBlocks % n ? 1 : 0));
}

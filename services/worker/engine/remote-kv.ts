// The remote KV tier (Redis, through services/worker/kv-transfer) seen from the engine: full blocks
// named by their hash chain. Read-through: before a request is scheduled, the leading full blocks the
// local prefix cache lacks are fetched and imported into the pool (a prefill worker's output, another
// replica's shared prefix, or a migrated request's history). Write-through: every block a request fills
// is exported and stored. A block that cannot be fetched is recomputed (policy "recompute") or fails the
// request (policy "fail"); a fetched block is only used after the store verified its checksum.
import { type BlockHash, blockHash } from "../../inference/block-hash.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { RateLimitedLog } from "../../kernel/rate-limited-log.ts";
import type { BlockPool } from "../kv/block-pool.ts";
import type { ModelRunner } from "../runtime/model-runner.ts";

export interface RemoteBlockRef {
  hash: BlockHash;
  tokens: number[];
}

export interface RemoteKvTier {
  /** Stores full blocks (data: one block's K/V of all layers, as ModelRunner.exportBlocks lays it out). */
  putBlocks(blocks: (RemoteBlockRef & { data: Float32Array })[]): Promise<void>;
  /**
   * Reads blocks, handing each one found (verified, its tokens confirmed) to `use` with its index in
   * `blocks`, in order; a missing or unusable block is skipped. The data are valid during the call
   * only (the tier may reuse the memory for its next read). Rejects when the tier is down.
   */
  readBlocks(blocks: RemoteBlockRef[], use: (index: number, data: Float32Array) => void): Promise<void>;
}

export interface RemoteKvOptions {
  tier: RemoteKvTier;
  /** Fetch missing prefix blocks before computing them. */
  readThrough: boolean;
  /** Store every block a request fills. */
  writeThrough: boolean;
  /** What an unavailable tier means for a request: recompute locally, or fail it. */
  policy: "recompute" | "fail";
}

export interface RemoteKvStats {
  fetched: number;
  missed: number;
  stored: number;
  fallbacks: Record<string, number>;
  /** Milliseconds the last fetchPrefix spent getting and importing blocks (0 when none were needed). */
  lastFetchMs: number;
  /** Milliseconds the last store spent exporting and storing blocks. */
  lastStoreMs: number;
}

export class RemoteKv {
  readonly options: RemoteKvOptions;
  readonly stats: RemoteKvStats = {
    fetched: 0,
    missed: 0,
    stored: 0,
    fallbacks: {},
    lastFetchMs: 0,
    lastStoreMs: 0,
  };
  private readonly pool: BlockPool;
  private readonly runner: ModelRunner;
  private readonly salt: string;
  /** Fallback warnings, at most one per reason every 10 s while the tier is down (a count of the rest). */
  private readonly warnings: RateLimitedLog | undefined;
  /** Hashes known to be in the tier (stored or fetched by this engine), so they are not stored again. */
  private readonly known = new Set<BlockHash>();

  constructor(
    options: RemoteKvOptions,
    parts: { pool: BlockPool; runner: ModelRunner; salt: string; log?: Logger },
  ) {
    this.options = options;
    this.pool = parts.pool;
    this.runner = parts.runner;
    this.salt = parts.salt;
    this.warnings = parts.log && new RateLimitedLog(parts.log);
  }

  /**
   * Imports the leading full blocks of `tokens` that the local cache lacks and the tier holds. Returns
   * the pool blocks imported, each holding one reference (the caller releases them once the request
   * has taken its own). At least one token is always left to compute, as in the local prefix cache.
   * `expected` leading blocks must be found (the request was prefilled or migrated elsewhere): a shortfall
   * follows the policy. Beyond them, a miss just means nobody computed the block yet.
   */
  async fetchPrefix(tokens: readonly number[], expected = 0): Promise<number[]> {
    const bs = this.pool.blockSize;
    const wanted: RemoteBlockRef[] = [];
    let parent: BlockHash | undefined;
    let local = true;
    for (let i = 0; i < Math.floor((tokens.length - 1) / bs); i++) {
      const blockTokens = tokens.slice(i * bs, (i + 1) * bs);
      parent = blockHash(parent, blockTokens, this.salt);
      if (local && this.pool.lookup(parent, blockTokens) !== undefined) continue;
      local = false;
      wanted.push({ hash: parent, tokens: blockTokens });
    }
    if (wanted.length === 0) return [];
    const started = performance.now();
    // The leading run of blocks found is usable; each is copied straight into the import buffer.
    let data: Float32Array | undefined;
    let count = 0;
    try {
      await this.options.tier.readBlocks(wanted, (i, block) => {
        if (i !== count) return;
        data ??= new Float32Array(wanted.length * block.length);
        data.set(block, i * block.length);
        count++;
      });
    } catch (err) {
      return this.fallback("unavailable", err, []);
    }
    this.stats.fetched += count;
    this.stats.missed += wanted.length - count;
    const localBlocks = Math.floor((tokens.length - 1) / bs) - wanted.length;
    if (localBlocks + count < Math.min(expected, Math.floor((tokens.length - 1) / bs))) {
      this.fallback("miss", undefined, []);
    }
    if (count === 0 || data === undefined) return [];
    const blocks = this.pool.allocate(count);
    if (!blocks) return this.fallback("no_free_blocks", undefined, []);
    await this.runner.importBlocks(blocks, data.subarray(0, (count * data.length) / wanted.length));
    for (let i = 0; i < count; i++) {
      this.pool.cacheBlock(blocks[i]!, wanted[i]!.hash, wanted[i]!.tokens);
      this.known.add(wanted[i]!.hash);
    }
    this.stats.lastFetchMs = performance.now() - started;
    return blocks;
  }

  /**
   * Stores blocks a request just filled; resolves true when stored, false when the store failed (errors
   * are counted, never thrown).
   */
  async store(blocks: number[], refs: RemoteBlockRef[]): Promise<boolean> {
    const fresh = refs.map((r, i) => ({ r, block: blocks[i]! })).filter(({ r }) => !this.known.has(r.hash));
    if (fresh.length === 0) return true;
    for (const { r } of fresh) this.known.add(r.hash);
    // Export now (queued before any later step can reuse the blocks), store in the background.
    const started = performance.now();
    let stored = true;
    const exported = this.runner.exportBlocks(fresh.map((f) => f.block));
    try {
      const data = await exported;
      const per = data.length / fresh.length;
      await this.options.tier.putBlocks(
        fresh.map(({ r }, i) => ({ ...r, data: data.subarray(i * per, (i + 1) * per) })),
      );
      this.stats.stored += fresh.length;
      this.stats.lastStoreMs = performance.now() - started;
    } catch (err) {
      stored = false;
      for (const { r } of fresh) this.known.delete(r.hash);
      this.countFallback("store_failed");
      this.warnings?.warn("store_failed", { err: (err as Error).message }, "storing KV blocks failed");
    }
    if (this.known.size > 200_000) this.known.clear();
    return stored;
  }

  private fallback(reason: string, err: unknown, value: number[]): number[] {
    this.countFallback(reason);
    if (this.options.policy === "fail") {
      throw new TesseraError(Code.UNAVAILABLE, `KV blocks unavailable (${reason})`, { cause: err });
    }
    this.warnings?.warn(
      `fallback:${reason}`,
      { reason, err: err instanceof Error ? err.message : undefined },
      "remote KV fallback: recomputing",
    );
    return value;
  }

  private countFallback(reason: string): void {
    this.stats.fallbacks[reason] = (this.stats.fallbacks[reason] ?? 0) + 1;
  }
}

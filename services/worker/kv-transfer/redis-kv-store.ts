// KV blocks of one model revision and layer range in Redis: pipelined SET (with a TTL) and GET of
// whole blocks, EXISTS for a remote prefix tier, deletion of a model's keys. Every read is verified
// (kv-block-codec.ts): a missing, evicted, corrupt or foreign block comes back `undefined` and is
// counted, never returned. An operation that cannot complete (Redis down, hung, out of memory) rejects
// with a TesseraError within the configured deadline; the caller falls back to recomputing.
//
// Value size: one block per value. Pipelined SET/GET of 64 MiB of values over one ioredis connection on
// loopback (redis-server 7.0, ioredis 6, 2 cores shared with other work; median of 7 runs, MiB/s):
//   value   16K  64K  128K  256K  384K  512K  1M   2M   4M
//   SET     157  232  410   301   416   410   298  312  206
//   GET     248  367  460   287   500   348   355  265  202
// Runs vary by ±30%, but 128 KiB-1 MiB is consistently the fast range and small or 4 MiB values are
// slower. The `base` preset's 384 KiB block lies in it, so blocks are not packed several to a value
// (which would also cost per-block lookups and TTLs); only models with blocks under ~64 KiB would gain.
// A batch is split into pipelines of at most `maxPipelineBytes` (4 MiB), two in flight: encoding or
// verifying one overlaps the transfer of the next. The blocks of a pipeline are spread over
// `connections` sockets of the store's own (resp-connection.ts), written without copying the payload
// and read straight into one allocation per pipeline; ioredis keeps the control path (health, EXISTS,
// SCAN/UNLINK). 96 blocks of 384 KiB on loopback, 2 busy cores, GB/s (SET / GET): through ioredis
// 0.65-0.95 / 0.34-0.86; own sockets, 1 connection 1.0-1.95 / 1.0-1.4 (see bench/RESULTS.md, disagg).
import type { BlockHash } from "../../inference/block-hash.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { RateLimitedLog } from "../../kernel/rate-limited-log.ts";
import type { Metrics } from "../../kernel/telemetry/metrics.ts";
import {
  type DecodedKvBlock,
  type KvBlockData,
  type KvBlockFormat,
  payloadFloats,
  validateFormat,
} from "./kv-block.ts";
import { decodeKvBlock, encodeKvHeader, kvValueBytes, payloadView } from "./kv-block-codec.ts";
import { blockKeyPrefix, checkModelId, modelKeyPattern } from "./kv-keys.ts";
import { type KvOp, KvTransferMetrics, type KvTransferStats } from "./kv-transfer-metrics.ts";
import { pipelined } from "./pipeline-window.ts";
import { ReceiveArenas } from "./receive-arenas.ts";
import { type KvStoreHealth, RedisConnection, type SetTimer } from "./redis-connection.ts";
import { isReplyError } from "./redis-errors.ts";
import { connectionOptions, type RedisKvConfig } from "./redis-kv-config.ts";
import type { RespReply } from "./resp-connection.ts";
import { RespPool, respAddress } from "./resp-pool.ts";

export type { KvStoreHealth } from "./redis-connection.ts";

export interface RedisKvStoreOptions {
  config: RedisKvConfig;
  format: KvBlockFormat;
  metrics?: Metrics;
  logger?: Logger;
  /** Milliseconds, for latencies; performance.now unless told. */
  now?: () => number;
  /** Deadline timers; setTimeout unless told. */
  setTimer?: SetTimer;
  /** Reads TLS files; fs.readFileSync unless told. */
  readFile?: (path: string) => Buffer;
}

type Replies = [Error | null, unknown][];

/** Pipelines of one batch in flight at once: the next is encoded and sent while one transfers. */
const PIPELINES_IN_FLIGHT = 2;

export class RedisKvStore {
  readonly format: KvBlockFormat;
  readonly config: RedisKvConfig;
  readonly #connection: RedisConnection;
  readonly #bulk: RespPool;
  readonly #arenas: ReceiveArenas;
  readonly #metrics: KvTransferMetrics;
  readonly #logger: Logger | undefined;
  /** Per-block warnings (failed GETs, rejected blocks): at most one of each every 10 s, with a count. */
  readonly #warnings: RateLimitedLog | undefined;
  readonly #now: () => number;
  readonly #keyPrefix: string;
  /** Blocks per pipeline, so that one pipeline carries at most maxPipelineBytes of values. */
  readonly #blocksPerPipeline: number;

  constructor(options: RedisKvStoreOptions) {
    const { config, format } = options;
    const invalid = validateFormat(format).error?.message ?? checkModelId(format.modelId);
    if (invalid !== undefined) throw new TesseraError(Code.INVALID_ARGUMENT, invalid);
    this.format = format;
    this.config = config;
    this.#logger = options.logger;
    this.#warnings = options.logger && new RateLimitedLog(options.logger);
    this.#now = options.now ?? (() => performance.now());
    this.#keyPrefix = blockKeyPrefix(config.keyPrefix, format);
    this.#blocksPerPipeline = Math.max(1, Math.floor(config.maxPipelineBytes / (4 * payloadFloats(format))));
    const meter = options.metrics?.meter("tessera.kv_transfer");
    this.#metrics = new KvTransferMetrics(meter, { model: format.modelId });
    const deps = {
      ...(options.logger && { logger: options.logger }),
      ...(options.setTimer && { setTimer: options.setTimer }),
    };
    const redisOptions = connectionOptions(config, options.readFile);
    this.#connection = new RedisConnection(redisOptions, config.opTimeoutMs, deps);
    this.#bulk = new RespPool(respAddress(redisOptions), config.connections);
    // Room for the batches of two reads at once, the first two touched now (see receive-arenas.ts).
    const batchBytes = this.#blocksPerPipeline * align8(kvValueBytes(format, "0".repeat(64)));
    this.#arenas = new ReceiveArenas({
      keep: 2 * PIPELINES_IN_FLIGHT,
      prefault: { count: PIPELINES_IN_FLIGHT, bytes: batchBytes },
    });
  }

  /** Connects; resolves with the health once Redis answered or the first attempt failed. */
  start(): Promise<KvStoreHealth> {
    this.#bulk.open();
    return this.#connection.start();
  }

  get health(): KvStoreHealth {
    return this.#connection.health;
  }

  onHealth(listener: (health: KvStoreHealth) => void): () => void {
    return this.#connection.onHealth(listener);
  }

  stats(): KvTransferStats {
    return this.#metrics.snapshot();
  }

  keyOf(hash: BlockHash): string {
    return this.#keyPrefix + hash;
  }

  /** Writes blocks (SET PX ttl); resolves once every one is stored. */
  putBlocks(blocks: readonly KvBlockData[]): Promise<void> {
    return this.#operation("put", async (signal) => {
      const ttl = String(this.config.ttlMs);
      const send = (batch: readonly KvBlockData[]) => {
        let bytes = 0;
        const replies = batch.map((block) => {
          const header = encodeKvHeader({ ...this.format, ...block });
          const payload = payloadView(block);
          bytes += header.length + payload.length;
          return this.#bulk.next().send(["SET", this.keyOf(block.hash), [header, payload], "PX", ttl]);
        });
        return settled(replies).then((replies) => ({ replies, bytes }));
      };
      const receive = (
        batch: readonly KvBlockData[],
        { replies, bytes }: { replies: Replies; bytes: number },
      ) => {
        const failed = replies.find(([err]) => err !== null)?.[0];
        if (failed) throw failed;
        this.#metrics.blocks("put", "stored", batch.length);
        this.#metrics.bytes("out", bytes);
      };
      await pipelined(batches(blocks, this.#blocksPerPipeline), PIPELINES_IN_FLIGHT, signal, send, receive);
    });
  }

  /** Reads and verifies blocks; a missing or unusable block is `undefined` (and counted). */
  async getBlocks(hashes: readonly BlockHash[]): Promise<(DecodedKvBlock | undefined)[]> {
    const found = new Array<DecodedKvBlock | undefined>(hashes.length).fill(undefined);
    await this.readBlocks(hashes, (i, block) => {
      found[i] = { ...block, data: block.data.slice() };
    });
    return found;
  }

  /**
   * Reads and verifies blocks, handing each usable one to `use` with its index, in order. The block's
   * data lie in memory the store reuses for later reads: valid during the call only (copy what you
   * keep), which spares the page faults of fresh memory for every read.
   */
  readBlocks(
    hashes: readonly BlockHash[],
    use: (index: number, block: DecodedKvBlock) => void,
  ): Promise<void> {
    return this.#operation("get", async (signal) => {
      let index = 0;
      const send = (batch: readonly BlockHash[]) => {
        const slots = new ValueSlots(
          batch.map((hash) => kvValueBytes(this.format, hash)),
          this.#arenas,
        );
        const replies = batch.map((hash, i) =>
          this.#bulk.next().send(["GET", this.keyOf(hash)], (n) => slots.slot(i, n)),
        );
        return settled(replies).then((replies) => ({ replies, slots }));
      };
      const receive = (
        batch: readonly BlockHash[],
        { replies, slots }: { replies: Replies; slots: ValueSlots },
      ) => {
        for (const [i, hash] of batch.entries()) {
          const block = this.#verify(hash, replies[i]!);
          // After the deadline the caller has its answer; late replies are only counted.
          if (block !== undefined && !signal.aborted) use(index, block);
          index++;
        }
        slots.release(); // every reply of the batch is in: nothing writes there any more
      };
      await pipelined(batches(hashes, this.#blocksPerPipeline), PIPELINES_IN_FLIGHT, signal, send, receive);
    });
  }

  /** Whether each block is in Redis (EXISTS; not verified: getBlocks may still miss). */
  hasBlocks(hashes: readonly BlockHash[]): Promise<boolean[]> {
    return this.#operation("has", async () => {
      const pipeline = this.#connection.redis.pipeline();
      for (const hash of hashes) pipeline.exists(this.keyOf(hash));
      const replies = await this.#exec(pipeline.exec());
      const present = replies.map(([err, count]) => {
        if (err !== null) throw err;
        return count === 1;
      });
      const hits = present.filter(Boolean).length;
      this.#metrics.blocks("has", "hit", hits);
      this.#metrics.blocks("has", "miss", present.length - hits);
      return present;
    });
  }

  /**
   * Removes every key of a model (all revisions and layer ranges; this store's model unless told):
   * SCAN + UNLINK, a deadline per page. Resolves with the number of keys removed.
   */
  async deleteModel(modelId = this.format.modelId): Promise<number> {
    const invalid = checkModelId(modelId);
    if (invalid !== undefined) throw new TesseraError(Code.INVALID_ARGUMENT, invalid);
    const redis = this.#connection.redis;
    const match = modelKeyPattern(this.config.keyPrefix, modelId);
    let cursor = "0";
    let removed = 0;
    do {
      removed += await this.#operation("delete", async () => {
        const [next, keys] = await redis.scan(cursor, "MATCH", match, "COUNT", 1000);
        cursor = next;
        return keys.length === 0 ? 0 : await redis.unlink(...keys);
      });
    } while (cursor !== "0");
    this.#logger?.info({ model: modelId, keys: removed }, "KV store: model's blocks deleted");
    return removed;
  }

  close(): Promise<void> {
    this.#bulk.close();
    return this.#connection.close();
  }

  #verify(hash: BlockHash, [err, value]: [Error | null, unknown]): DecodedKvBlock | undefined {
    if (err !== null) {
      if (!isReplyError(err)) throw err;
      this.#metrics.blocks("get", "error");
      this.#warnings?.warn("get_failed", { key: this.keyOf(hash), err: err.message }, "KV store: GET failed");
      return undefined;
    }
    if (!Buffer.isBuffer(value)) {
      this.#metrics.blocks("get", "miss");
      return undefined;
    }
    this.#metrics.bytes("in", value.length);
    const { value: block, error } = decodeKvBlock(value, { ...this.format, hash });
    if (block !== undefined) {
      this.#metrics.blocks("get", "hit");
      return block;
    }
    const corrupt = error.code === Code.DATA_LOSS;
    this.#metrics.blocks("get", corrupt ? "checksum_failure" : "mismatch");
    this.#warnings?.warn(
      "rejected",
      { key: this.keyOf(hash), err: error.message },
      "KV store: block rejected",
    );
    // A corrupt value would fail every later read as well.
    if (corrupt) this.#connection.redis.unlink(this.keyOf(hash)).catch(() => {});
    return undefined;
  }

  /** A pipeline's replies; a pipeline that could not run at all rejects. */
  async #exec(replies: Promise<Replies | null>): Promise<Replies> {
    const result = await replies;
    if (result === null) throw new TesseraError(Code.UNAVAILABLE, "KV store: Redis dropped the pipeline");
    return result;
  }

  async #operation<T>(op: KvOp, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const start = this.#now();
    try {
      return await this.#connection.run(op, fn);
    } catch (err) {
      const error = TesseraError.from(err);
      this.#metrics.failed(op, error.code);
      throw error;
    } finally {
      this.#metrics.duration(op, (this.#now() - start) / 1000);
    }
  }
}

/** Each command's reply or error, in order (commands on several connections answer independently). */
function settled(replies: Promise<RespReply>[]): Promise<Replies> {
  return Promise.all(
    replies.map((reply) =>
      reply.then(
        (value): [Error | null, unknown] => [null, value],
        (err: unknown): [Error | null, unknown] => [
          err instanceof Error ? err : new Error(String(err)),
          null,
        ],
      ),
    ),
  );
}

/**
 * The GET replies of one batch in one arena, taken when the first reply comes: value i at the sum
 * of the sizes before it (each rounded up to 8, so payloads stay 4-byte aligned and decode as views).
 * A reply of another length than a block of this store has gets a buffer of its own.
 */
class ValueSlots {
  readonly #lengths: number[];
  readonly #offsets: number[] = [];
  readonly #bytes: number;
  readonly #arenas: ReceiveArenas;
  #memory: Buffer | undefined;

  constructor(lengths: number[], arenas: ReceiveArenas) {
    this.#lengths = lengths;
    this.#arenas = arenas;
    let at = 0;
    for (const length of lengths) {
      this.#offsets.push(at);
      at += align8(length);
    }
    this.#bytes = at;
  }

  slot(index: number, length: number): Buffer | undefined {
    if (length !== this.#lengths[index]) return undefined;
    this.#memory ??= this.#arenas.take(this.#bytes);
    const at = this.#offsets[index]!;
    return this.#memory.subarray(at, at + length);
  }

  release(): void {
    if (this.#memory !== undefined) this.#arenas.give(this.#memory);
    this.#memory = undefined;
  }
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

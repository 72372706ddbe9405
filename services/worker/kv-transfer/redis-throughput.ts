// Throughput of raw Redis SET/GET and of the KV block store, measured in-process in one run, so the
// disaggregation benchmark can report the store's throughput as a ratio of what Redis itself moves.
import { randomFillSync } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import type { KvBlockData } from "./kv-block.ts";
import type { RedisKvStore } from "./redis-kv-store.ts";

export interface Throughput {
  setBytesPerS: number;
  getBytesPerS: number;
}

const BENCH_TTL_MS = 60_000;

/**
 * Pipelined SET then GET of `count` random values of `valueBytes` each (one pipeline per phase), over
 * one ioredis connection: the best this client and server do for that value size. The keys are
 * removed afterwards.
 */
export async function measureRawRedis(url: string, valueBytes: number, count: number): Promise<Throughput> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  redis.on("error", () => {});
  await redis.connect();
  const keys = Array.from({ length: count }, (_, i) => `tessera:bench:raw:${process.pid}:${i}`);
  const values = keys.map(() => randomFillSync(Buffer.allocUnsafe(valueBytes)));
  const bytes = valueBytes * count;
  try {
    const set = redis.pipeline();
    for (const [i, key] of keys.entries()) set.set(key, values[i]!, "PX", BENCH_TTL_MS);
    const setSeconds = await timed(() => set.exec());
    const get = redis.pipeline();
    for (const key of keys) get.getBuffer(key);
    let got = 0;
    const getSeconds = await timed(async () => {
      const replies = (await get.exec()) ?? [];
      got = replies.reduce((n, [, v]) => n + (Buffer.isBuffer(v) ? v.length : 0), 0);
    });
    if (got !== bytes) throw new Error(`raw GET returned ${got} of ${bytes} bytes`);
    return { setBytesPerS: bytes / setSeconds, getBytesPerS: bytes / getSeconds };
  } finally {
    await redis.unlink(...keys).catch(() => {});
    redis.disconnect();
  }
}

/** The same figures through the store: putBlocks then getBlocks of `blocks` (payload bytes counted). */
export async function measureStore(store: RedisKvStore, blocks: readonly KvBlockData[]): Promise<Throughput> {
  const bytes = blocks.reduce((n, b) => n + b.data.byteLength, 0);
  const setSeconds = await timed(() => store.putBlocks(blocks));
  let found = 0;
  const getSeconds = await timed(async () => {
    const got = await store.getBlocks(blocks.map((b) => b.hash));
    found = got.filter((b) => b !== undefined).length;
  });
  if (found !== blocks.length) throw new Error(`store GET returned ${found} of ${blocks.length} blocks`);
  return { setBytesPerS: bytes / setSeconds, getBytesPerS: bytes / getSeconds };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return (performance.now() - start) / 1000;
}

// Throughput of raw Redis SET/GET and of the KV block store, measured in one run, so the
// disaggregation benchmark can report the store's throughput as a ratio of what Redis itself moves.
// Raw Redis is measured at its best for the value size: redis-benchmark (C, 16 connections, 4
// commands pipelined on each) and ioredis tuned the same way; one ioredis pipeline over one
// connection is kept as the figure the store was first compared with.
import { execFile } from "node:child_process";
import { randomFillSync } from "node:crypto";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import type { KvBlockData } from "./kv-block.ts";
import type { RedisKvStore } from "./redis-kv-store.ts";

export interface Throughput {
  setBytesPerS: number;
  getBytesPerS: number;
}

const BENCH_TTL_MS = 60_000;

export interface RawRedisOptions {
  /** Connections used at once; the values are spread over them. 1 unless told. */
  connections?: number;
  /** Commands per pipeline on each connection (like redis-benchmark -P); all in one pipeline unless told. */
  pipeline?: number;
  /** Times every value is SET (then GET): later rounds overwrite, as redis-benchmark's do. 1 unless told. */
  rounds?: number;
}

/**
 * SET then GET of `count` random values of `valueBytes` each through ioredis: over `connections`
 * connections at once, each sending its share in pipelines of `pipeline` commands one after another
 * (one connection and one pipeline per phase unless told). The keys are removed afterwards.
 */
export async function measureRawRedis(
  url: string,
  valueBytes: number,
  count: number,
  options: RawRedisOptions = {},
): Promise<Throughput> {
  const connections = options.connections ?? 1;
  const depth = options.pipeline ?? count;
  const rounds = options.rounds ?? 1;
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new RangeError(`rounds: ${rounds}, expected a positive integer`);
  if (!Number.isInteger(connections) || connections < 1)
    throw new RangeError(`connections: ${connections}, expected a positive integer`);
  if (!Number.isInteger(depth) || depth < 1)
    throw new RangeError(`pipeline: ${depth}, expected a positive integer`);
  const clients = Array.from({ length: connections }, () => {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    redis.on("error", () => {});
    return redis;
  });
  await Promise.all(clients.map((c) => c.connect()));
  const keys = Array.from({ length: count }, (_, i) => `tessera:bench:raw:${process.pid}:${i}`);
  const values = keys.map(() => randomFillSync(Buffer.allocUnsafe(valueBytes)));
  const bytes = valueBytes * count * rounds;
  // Key i goes over connection i % connections, in pipelines of `depth` keys.
  const shares = clients.map((_, c) => keys.flatMap((_key, i) => (i % connections === c ? [i] : [])));
  const eachConnection = (run: (redis: Redis, indices: number[]) => Promise<void>) =>
    Promise.all(
      clients.map(async (redis, c) => {
        const share = shares[c]!;
        for (let r = 0; r < rounds; r++)
          for (let i = 0; i < share.length; i += depth) await run(redis, share.slice(i, i + depth));
      }),
    );
  try {
    const setSeconds = await timed(() =>
      eachConnection(async (redis, indices) => {
        const set = redis.pipeline();
        for (const i of indices) set.set(keys[i]!, values[i]!, "PX", BENCH_TTL_MS);
        await set.exec();
      }),
    );
    let got = 0;
    const getSeconds = await timed(() =>
      eachConnection(async (redis, indices) => {
        const get = redis.pipeline();
        for (const i of indices) get.getBuffer(keys[i]!);
        const replies = (await get.exec()) ?? [];
        got += replies.reduce((n, [, v]) => n + (Buffer.isBuffer(v) ? v.length : 0), 0);
      }),
    );
    if (got !== bytes) throw new Error(`raw GET returned ${got} of ${bytes} bytes`);
    return { setBytesPerS: bytes / setSeconds, getBytesPerS: bytes / getSeconds };
  } finally {
    await clients[0]!.unlink(...keys).catch(() => {});
    for (const c of clients) c.disconnect();
  }
}

/**
 * redis-benchmark's SET and GET (`-t set,get -d valueBytes -c connections -P pipeline -r count`,
 * `count * rounds` requests each) against a plaintext server: what Redis moves for a C client.
 * redis-benchmark writes its own keys (`key:` and 12 digits, `count` of them); they are removed
 * afterwards, so use it on a server of its own.
 */
export async function measureRedisBenchmark(
  url: string,
  valueBytes: number,
  count: number,
  options: { connections?: number; pipeline?: number; rounds?: number } = {},
): Promise<Throughput> {
  const target = new URL(url);
  if (target.protocol !== "redis:")
    throw new RangeError(`url: ${target.protocol} is not supported here, only redis:// (plaintext)`);
  const args = [
    ...["-h", target.hostname, "-p", target.port || "6379"],
    ...(target.password ? ["-a", decodeURIComponent(target.password), "--no-auth-warning"] : []),
    ...[
      "-d",
      String(valueBytes),
      "-c",
      String(options.connections ?? 16),
      "-P",
      String(options.pipeline ?? 4),
    ],
    ...["-r", String(count), "-n", String(count * (options.rounds ?? 10)), "-t", "set,get", "--csv"],
  ];
  const { stdout } = await promisify(execFile)("redis-benchmark", args);
  const rps = new Map(
    stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.split(",").map((cell) => cell.replaceAll('"', "")))
      .map(([test, perSecond]) => [test, Number(perSecond)] as const),
  );
  const set = rps.get("SET");
  const get = rps.get("GET");
  // redis-benchmark times in milliseconds and prints "inf" for a run shorter than that.
  if (!Number.isFinite(set) || !Number.isFinite(get) || !set || !get)
    throw new Error(`redis-benchmark printed no usable SET/GET figures (too few rounds to time?): ${stdout}`);
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  redis.on("error", () => {});
  try {
    await redis.connect();
    const keys = Array.from({ length: count }, (_, i) => `key:${String(i).padStart(12, "0")}`);
    await redis.unlink(...keys);
  } finally {
    redis.disconnect();
  }
  return { setBytesPerS: set * valueBytes, getBytesPerS: get * valueBytes };
}

/**
 * The same figures through the store: putBlocks, then readBlocks (the read path the engine uses:
 * every block verified and handed over in the store's reused memory) of `blocks`, `rounds` times
 * each (later rounds overwrite, as redis-benchmark's do); payload bytes counted.
 */
export async function measureStore(
  store: RedisKvStore,
  blocks: readonly KvBlockData[],
  rounds = 1,
): Promise<Throughput> {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new RangeError(`rounds: ${rounds}, expected a positive integer`);
  const bytes = blocks.reduce((n, b) => n + b.data.byteLength, 0) * rounds;
  const hashes = blocks.map((b) => b.hash);
  const setSeconds = await timed(async () => {
    for (let r = 0; r < rounds; r++) await store.putBlocks(blocks);
  });
  let found = 0;
  const getSeconds = await timed(async () => {
    for (let r = 0; r < rounds; r++) await store.readBlocks(hashes, () => found++);
  });
  if (found !== blocks.length * rounds)
    throw new Error(`store GET returned ${found} of ${blocks.length * rounds} blocks`);
  return { setBytesPerS: bytes / setSeconds, getBytesPerS: bytes / getSeconds };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return (performance.now() - start) / 1000;
}

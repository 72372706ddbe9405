// b. Cache-aware routing: 4 workers whose KV pools (192 blocks of 16 tokens) hold a few prefixes
// each but not the workload's 16 tenants' 384-token system prompts together. Requests pick a tenant
// at random and add a 24-token question; TTFT p50 with consistent hashing on prefix blocks (the
// default pipeline) vs round-robin, in alternating rounds with fresh tenants each. Then the same with
// no prefix reuse (every prompt unique), where cache-aware routing should cost nothing.
import { type Check, check } from "../../report.ts";
import { closedLoop, percentile, type Request, type Sample } from "./load.ts";
import { type RouterProc, startRouter, startWorker, type Worker } from "./processes.ts";

const WORKERS = 4;
const KV_BLOCKS = 192;
const TENANTS = 16;
const SYSTEM_TOKENS = 448;
const QUESTION_TOKENS = 16;
const REQUESTS = 160;
const CONCURRENCY = 4;
const ROUNDS = 4;

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const ids = (n: number, random: () => number) =>
  Array.from({ length: n }, () => 3 + Math.floor(random() * 500));

function sharedPrefix(seed: number): Request[] {
  const random = rng(seed);
  const systems = Array.from({ length: TENANTS }, () => ids(SYSTEM_TOKENS, random));
  return Array.from({ length: REQUESTS }, () => {
    const system = systems[Math.floor(random() * TENANTS)]!;
    return {
      prompt: { case: "tokenIds" as const, value: { ids: [...system, ...ids(QUESTION_TOKENS, random)] } },
      sampling: { maxTokens: 4, ignoreEos: true },
    };
  });
}

function unique(seed: number): Request[] {
  const random = rng(seed);
  return Array.from({ length: REQUESTS }, () => ({
    prompt: { case: "tokenIds" as const, value: { ids: ids(SYSTEM_TOKENS + QUESTION_TOKENS, random) } },
    sampling: { maxTokens: 4, ignoreEos: true },
  }));
}

async function compare(
  cacheAware: RouterProc,
  roundRobin: RouterProc,
  workload: (seed: number) => Request[],
  seed: number,
) {
  const samples: Record<"cacheAware" | "roundRobin", Sample[]> = { cacheAware: [], roundRobin: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order =
      round % 2 === 0 ? (["cacheAware", "roundRobin"] as const) : (["roundRobin", "cacheAware"] as const);
    for (const [i, policy] of order.entries()) {
      const router = policy === "cacheAware" ? cacheAware : roundRobin;
      samples[policy].push(
        ...(await closedLoop(router.grpcAddress, workload(seed + round * 10 + i), CONCURRENCY)),
      );
    }
  }
  const stats = (s: Sample[]) => ({
    ttftP50: percentile(
      s.map((x) => x.ttft),
      50,
    ),
    ttftP90: percentile(
      s.map((x) => x.ttft),
      90,
    ),
    latencyP50: percentile(
      s.map((x) => x.latency),
      50,
    ),
    requests: s.length,
  });
  return { cacheAware: stats(samples.cacheAware), roundRobin: stats(samples.roundRobin) };
}

export async function cacheAware(
  modelDir: string,
  threads: number,
): Promise<{ figures: Record<string, unknown>; checks: Check[] }> {
  const workers: Worker[] = await Promise.all(
    Array.from({ length: WORKERS }, () => startWorker(modelDir, { kvCacheBlocks: KV_BLOCKS }, threads)),
  );
  const noCache = { cache: { enabled: false, coalesce: false } };
  const routers = await Promise.all([
    startRouter(modelDir, workers, noCache),
    startRouter(modelDir, workers, { ...noCache, routing: { scorers: [], picker: { type: "round-robin" } } }),
  ]);
  try {
    const [ch, rr] = routers as [RouterProc, RouterProc];
    await closedLoop(ch.grpcAddress, unique(1).slice(0, 32), CONCURRENCY);
    await closedLoop(rr.grpcAddress, unique(2).slice(0, 32), CONCURRENCY);
    const shared = await compare(ch, rr, sharedPrefix, 100);
    console.log(
      `cache-aware, shared prefixes: TTFT p50 ${shared.cacheAware.ttftP50.toFixed(2)} vs round-robin ${shared.roundRobin.ttftP50.toFixed(2)} ms`,
    );
    const none = await compare(ch, rr, unique, 200);
    console.log(
      `cache-aware, no reuse: TTFT p50 ${none.cacheAware.ttftP50.toFixed(2)} vs round-robin ${none.roundRobin.ttftP50.toFixed(2)} ms`,
    );
    const noReuse = none.cacheAware.ttftP50 / none.roundRobin.ttftP50;
    return {
      figures: {
        workers: WORKERS,
        kvCacheBlocks: KV_BLOCKS,
        tenants: TENANTS,
        systemTokens: SYSTEM_TOKENS,
        concurrency: CONCURRENCY,
        sharedPrefixMs: shared,
        noReuseMs: none,
        noReuseRatio: noReuse,
        sharedPrefixRatio: shared.cacheAware.ttftP50 / shared.roundRobin.ttftP50,
      },
      checks: [
        check(
          "cache-aware TTFT p50 / round-robin, shared prefixes",
          shared.cacheAware.ttftP50 / shared.roundRobin.ttftP50,
          "<=",
          0.6,
        ),
        check(
          "cache-aware TTFT p50 / round-robin, no prefix reuse: distance of the ratio from 1",
          Math.abs(noReuse - 1),
          "<=",
          0.05,
        ),
      ],
    };
  } finally {
    await Promise.all(routers.map((r) => r.stop()));
    await Promise.all(workers.map((w) => w.stop()));
  }
}

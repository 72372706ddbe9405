// a. Router overhead: the same 32-token generations straight to one worker, through a router in front
// of it, and through a bare pass-through proxy (bare-proxy.ts: the floor any extra hop costs here), at
// 1, 16 and 64 concurrent, in rounds of rotating order so all three see the same machine. Each round is
// a closed loop (the next request leaves as soon as one ends), so the router is measured warm, as under
// steady load: taking turns request by request instead left the proxy and router idle ~45 ms before
// each of their requests, and their wake-up then added ~1 ms the direct path did not pay. End-to-end
// latency (call start to stream end) p50 and p99 of each; the checks compare the router with the
// direct path. The worker is pinned to one half
// of the cores and the router and this load generator to the other, as when the router runs beside
// the workers rather than on their cores: unpinned on a small machine, every microsecond of CPU the
// router spends relaying tokens is taken from the worker's decoding.
import { availableParallelism } from "node:os";
import { type Check, check } from "../../report.ts";
import { closedLoop, percentile, type Request, type Sample } from "./load.ts";
import { pin, startBareProxy, startRouter, startWorker, type Worker } from "./processes.ts";

// Interleaving: the machine drifts by several ms within seconds, more than the targets allow, so the
// paths take turns in short rounds and their samples are pooled. The first `concurrency` requests of a
// round are not counted: they start on a path that has just sat idle while the others ran, which costs
// the proxy and router a wake-up the direct path does not pay.
const LEVELS = [
  { concurrency: 1, requests: 16, rounds: 32 },
  { concurrency: 16, requests: 160, rounds: 12 },
  { concurrency: 64, requests: 640, rounds: 8 },
];
const PATHS = ["direct", "proxy", "router"] as const;
type Path = (typeof PATHS)[number];

function requests(n: number, salt: number): Request[] {
  return Array.from({ length: n }, (_, i) => ({
    prompt: {
      case: "tokenIds" as const,
      value: { ids: Array.from({ length: 24 }, (_, j) => 3 + ((i * 131 + j * 17 + salt) % 500)) },
    },
    sampling: { maxTokens: 32, ignoreEos: true },
  }));
}

export async function overhead(
  modelDir: string,
  threads: number,
): Promise<{ figures: Record<string, unknown>; checks: Check[] }> {
  const worker: Worker = await startWorker(modelDir, {}, threads);
  const router = await startRouter(modelDir, [worker], { cache: { enabled: false, coalesce: false } });
  const proxy = await startBareProxy(worker);
  const address: Record<Path, string> = {
    direct: worker.address,
    proxy: proxy.address,
    router: router.grpcAddress,
  };
  const cores = availableParallelism();
  const half = Math.max(1, Math.floor(cores / 2));
  const workerCores = `0-${half - 1}`;
  const otherCores = cores > 1 ? `${half}-${cores - 1}` : "0";
  const pinned =
    pin(worker.child.pid!, workerCores) &&
    pin(router.child.pid!, otherCores) &&
    pin(proxy.child.pid!, otherCores) &&
    pin(process.pid, otherCores);
  const figures: Record<string, unknown> = {
    pinned,
    workerCores,
    routerProxyAndClientCores: otherCores,
    levels: LEVELS,
  };
  const checks: Check[] = [];
  try {
    for (const path of PATHS) await closedLoop(address[path], requests(64, 7), 16);
    for (const { concurrency, requests: n, rounds } of LEVELS) {
      const samples: Record<Path, Sample[]> = { direct: [], proxy: [], router: [] };
      for (let round = 0; round < rounds; round++) {
        const load = requests(n, round);
        for (let i = 0; i < PATHS.length; i++) {
          const path = PATHS[(round + i) % PATHS.length]!;
          samples[path].push(...(await closedLoop(address[path], load, concurrency)).slice(concurrency));
        }
      }
      const stats = (of: Sample[]) => ({
        p50: percentile(
          of.map((s) => s.latency),
          50,
        ),
        p99: percentile(
          of.map((s) => s.latency),
          99,
        ),
        ttftP50: percentile(
          of.map((s) => s.ttft),
          50,
        ),
        requests: of.length,
      });
      const d = stats(samples.direct);
      const p = stats(samples.proxy);
      const r = stats(samples.router);
      figures[`c${concurrency}`] = {
        directMs: d,
        bareProxyMs: p,
        routerMs: r,
        bareProxyMinusDirectMs: { p50: p.p50 - d.p50, p99: p.p99 - d.p99 },
        routerMinusBareProxyMs: { p50: r.p50 - p.p50, p99: r.p99 - p.p99 },
      };
      checks.push(
        check(`overhead c=${concurrency}: p50 router / direct`, r.p50 / d.p50, "<=", 1.1),
        check(`overhead c=${concurrency}: p50 router - direct (ms)`, r.p50 - d.p50, "<=", 1),
        check(`overhead c=${concurrency}: p99 router - direct (ms)`, r.p99 - d.p99, "<=", 3),
      );
      const line = (x: { p50: number; p99: number }) => `p50 ${x.p50.toFixed(2)} p99 ${x.p99.toFixed(2)}`;
      console.log(
        `overhead c=${concurrency}: direct ${line(d)}; bare proxy ${line(p)}; router ${line(r)} ms`,
      );
    }
  } finally {
    pin(process.pid, `0-${cores - 1}`);
    await router.stop();
    await proxy.stop();
    await worker.stop();
  }
  return { figures, checks };
}

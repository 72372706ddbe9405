// a. Router overhead: the same 32-token generations straight to one worker, through a router in front
// of it, and through a bare pass-through proxy (bare-proxy.ts: the floor any extra hop costs here), at
// 1, 16 and 64 concurrent, in rounds of rotating order so all three see the same machine. Each round is
// a closed loop (the next request leaves as soon as one ends), so the router is measured warm, as under
// steady load: taking turns request by request instead left the proxy and router idle ~45 ms before
// each of their requests, and their wake-up then added ~1 ms the direct path did not pay.
//
// Measured per request: end-to-end latency (call start to stream end), and the time added outside the
// worker: that latency less the worker's own time on the request, which its server-timing trailer
// reports and which the proxy and the router pass on (services/rpc/server-timing.ts). The checks
// compare the router with the bare proxy, which pays the same extra hop (issue 22), on the time added:
// at 16 and 64 concurrent the worker's time on a request swings with the batches it happens to join
// (end-to-end p50 and p99 of the direct and the proxy paths, which add the same nothing to a request's
// work, differed by 10-40 ms within one run), which buries a hop's tenths of a millisecond; without
// it, what is left is the hops, the client's side and the CPU they share. End-to-end figures are kept
// beside. The router and the proxy run on a core of their own
// and the worker and this load generator on the other(s), as in a deployment where the router has its
// own CPU; both are started pinned, so each sees one CPU (the router's GC settings follow that,
// services/cli/router-process.ts) and the proxy runs with the same node flags. The router records its
// garbage-collection pauses (gc-observer.ts) and those of its rounds are reported as a histogram.
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { routerNodeFlags } from "../../../services/cli/router-process.ts";
import { type Check, check } from "../../report.ts";
import { GcRecorder, type Pause, summarize, within } from "./gc-pauses.ts";
import { closedLoop, percentile, type Request, type Sample } from "./load.ts";
import { pin, startBareProxy, startRouter, startWorker, type Worker } from "./processes.ts";

// Interleaving: the machine drifts by several ms within seconds, more than the targets allow, so the
// paths take turns in short rounds and their samples are pooled. The first `concurrency` requests of a
// round are not counted: they start on a path that has just sat idle while the others ran, which costs
// the proxy and router a wake-up the direct path does not pay.
// Rounds give each level's p99 a few thousand samples: at 16 concurrent 12 rounds gave 1,728, and
// the p99 of the direct and proxy paths, which add the same nothing, still differed by up to 3.5 ms.
const LEVELS = [
  { concurrency: 1, requests: 16, rounds: 32 },
  { concurrency: 16, requests: 160, rounds: 24 },
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
  const cores = availableParallelism();
  const routerCores = cores > 1 ? `${cores - 1}` : "0";
  const otherCores = cores > 1 ? `0-${cores - 2}` : "0";
  const gc = new GcRecorder("router");
  const worker: Worker = await startWorker(modelDir, {}, threads);
  const router = await startRouter(
    modelDir,
    [worker],
    { cache: { enabled: false, coalesce: false } },
    { ...gc.spawnOptions(), cores: routerCores },
  );
  // The proxy gets the flags the router gives itself on one CPU, so both hops collect garbage alike.
  const proxy = await startBareProxy(worker, {
    nodeArgs: routerNodeFlags([], undefined, 1) ?? [],
    cores: routerCores,
  });
  const address: Record<Path, string> = {
    direct: worker.address,
    proxy: proxy.address,
    router: router.grpcAddress,
  };
  const pinned = pin(worker.child.pid!, otherCores) && pin(process.pid, otherCores);
  const figures: Record<string, unknown> = {
    pinned,
    routerAndProxyCores: routerCores,
    workerAndClientCores: otherCores,
    routerCommandLine: commandLine(router.child.pid!),
    proxyCommandLine: commandLine(proxy.child.pid!),
    levels: LEVELS,
  };
  const checks: Check[] = [];
  try {
    for (const path of PATHS) await closedLoop(address[path], requests(64, 7), 16);
    for (const { concurrency, requests: n, rounds } of LEVELS) {
      const samples: Record<Path, Sample[]> = { direct: [], proxy: [], router: [] };
      const pauses: Pause[] = [];
      let routerMs = 0;
      const loadAverage = loadavg();
      for (let round = 0; round < rounds; round++) {
        const load = requests(n, round);
        for (let i = 0; i < PATHS.length; i++) {
          const path = PATHS[(round + i) % PATHS.length]!;
          if (path === "router") await gc.take(router.child.pid!);
          const start = Date.now();
          samples[path].push(...(await closedLoop(address[path], load, concurrency)).slice(concurrency));
          if (path !== "router") continue;
          const end = Date.now();
          routerMs += end - start;
          pauses.push(...within(await gc.take(router.child.pid!), [[start, end]]));
        }
      }
      const stats = (of: Sample[]) => {
        const latency = of.map((s) => s.latency);
        const added = of.map((s) => s.latency - s.workerMs);
        const ttft = of.map((s) => s.ttft);
        const worker = of.map((s) => s.workerMs);
        return {
          p50: percentile(latency, 50),
          p99: percentile(latency, 99),
          ttftP50: percentile(ttft, 50),
          workerP50: percentile(worker, 50),
          added: { p50: percentile(added, 50), p99: percentile(added, 99), max: percentile(added, 100) },
          requests: of.length,
          withoutServerTiming: of.filter((s) => Number.isNaN(s.workerMs)).length,
        };
      };
      const d = stats(samples.direct);
      const p = stats(samples.proxy);
      const r = stats(samples.router);
      const routerGc = summarize(pauses, routerMs);
      const routerOwn = samples.router.map((s) => s.routerMs - s.workerMs);
      figures[`c${concurrency}`] = {
        loadAverage,
        directMs: d,
        bareProxyMs: p,
        routerMs: r,
        endToEnd: {
          bareProxyMinusDirectMs: { p50: p.p50 - d.p50, p99: p.p99 - d.p99 },
          routerMinusBareProxyMs: { p50: r.p50 - p.p50, p99: r.p99 - p.p99 },
        },
        added: {
          bareProxyMinusDirectMs: { p50: p.added.p50 - d.added.p50, p99: p.added.p99 - d.added.p99 },
          routerMinusBareProxyMs: { p50: r.added.p50 - p.added.p50, p99: r.added.p99 - p.added.p99 },
        },
        // The router's own server-timing less the worker's: its processing and the relay hop to the
        // worker and back, without the client's side of the connection.
        routerOwnMs: {
          p50: percentile(routerOwn, 50),
          p99: percentile(routerOwn, 99),
        },
        routerGc,
      };
      // A sample without the worker's time counts as NaN: the check then fails rather than pass on less.
      const missing = d.withoutServerTiming + p.withoutServerTiming + r.withoutServerTiming;
      const added = (x: number) => (missing > 0 ? Number.NaN : x);
      checks.push(
        check(
          `overhead c=${concurrency}: p50 of the time added outside the worker, router - bare proxy (ms)`,
          added(r.added.p50 - p.added.p50),
          "<=",
          0.3,
        ),
      );
      if (concurrency > 1)
        checks.push(
          check(
            `overhead c=${concurrency}: p99 of the time added outside the worker, router - bare proxy (ms)`,
            added(r.added.p99 - p.added.p99),
            "<=",
            concurrency >= 64 ? 5 : 3,
          ),
        );
      if (concurrency >= 64)
        checks.push(
          check(`overhead c=${concurrency}: router's longest GC pause (ms)`, routerGc.maxMs, "<=", 5),
        );
      const line = (x: ReturnType<typeof stats>) =>
        `p50 ${x.p50.toFixed(2)} p99 ${x.p99.toFixed(2)} (added p50 ${x.added.p50.toFixed(2)} p99 ${x.added.p99.toFixed(2)})`;
      console.log(
        `overhead c=${concurrency}: direct ${line(d)}; bare proxy ${line(p)}; router ${line(r)} ms; router GC: ${routerGc.pauses} pauses, longest ${routerGc.maxMs.toFixed(2)} ms`,
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

/** The process's command line (node flags included) as /proc shows it; "" where it cannot be read. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

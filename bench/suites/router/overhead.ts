// a. Router overhead: the same 32-token generations straight to one worker, through a router in front
// of it, and through a bare pass-through proxy (bare-proxy.ts: the floor any extra hop costs here), at
// 1, 16 and 64 concurrent, in rounds of rotating order so all three see the same machine. Each round is
// a closed loop (the next request leaves as soon as one ends), so the router is measured warm, as under
// steady load: taking turns request by request instead left the proxy and router idle ~45 ms before
// each of their requests, and their wake-up then added ~1 ms the direct path did not pay. End-to-end
// latency (call start to stream end) p50 and p99 of each; the checks compare the router with the bare
// proxy, which pays the same extra hop (issue 22). The router and the proxy run on a core of their own
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
      const routerGc = summarize(pauses, routerMs);
      figures[`c${concurrency}`] = {
        loadAverage,
        directMs: d,
        bareProxyMs: p,
        routerMs: r,
        bareProxyMinusDirectMs: { p50: p.p50 - d.p50, p99: p.p99 - d.p99 },
        routerMinusBareProxyMs: { p50: r.p50 - p.p50, p99: r.p99 - p.p99 },
        routerGc,
      };
      checks.push(check(`overhead c=${concurrency}: p50 router - bare proxy (ms)`, r.p50 - p.p50, "<=", 0.3));
      if (concurrency > 1)
        checks.push(
          check(
            `overhead c=${concurrency}: p99 router - bare proxy (ms)`,
            r.p99 - p.p99,
            "<=",
            concurrency >= 64 ? 5 : 3,
          ),
        );
      if (concurrency >= 64)
        checks.push(
          check(`overhead c=${concurrency}: router's longest GC pause (ms)`, routerGc.maxMs, "<=", 5),
        );
      const line = (x: { p50: number; p99: number }) => `p50 ${x.p50.toFixed(2)} p99 ${x.p99.toFixed(2)}`;
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

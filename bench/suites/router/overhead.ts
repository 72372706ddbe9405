// a. Router overhead: the same 32-token generations straight to one worker and through a router in
// front of it, at 1, 16 and 64 concurrent, in alternating rounds so both see the same machine.
// End-to-end latency (call start to stream end) p50 and p99 of each. The worker is pinned to one half
// of the cores and the router and this load generator to the other, as when the router runs beside
// the workers rather than on their cores: unpinned on a small machine, every microsecond of CPU the
// router spends relaying tokens is taken from the worker's decoding.
import { availableParallelism } from "node:os";
import { type Check, check } from "../../report.ts";
import { closedLoop, percentile, type Request, type Sample } from "./load.ts";
import { pin, startRouter, startWorker, type Worker } from "./processes.ts";

const LEVELS = [
  { concurrency: 1, requests: 60 },
  { concurrency: 16, requests: 240 },
  { concurrency: 64, requests: 640 },
];
// Alternating rounds: the machine drifts by several ms between runs of the same thing, more than the
// targets allow, so the two paths are paired round by round and pooled over enough rounds.
const ROUNDS = 8;

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
  const cores = availableParallelism();
  const half = Math.max(1, Math.floor(cores / 2));
  const workerCores = `0-${half - 1}`;
  const otherCores = cores > 1 ? `${half}-${cores - 1}` : "0";
  const pinned =
    pin(worker.child.pid!, workerCores) && pin(router.child.pid!, otherCores) && pin(process.pid, otherCores);
  const figures: Record<string, unknown> = {
    pinned,
    workerCores,
    routerAndClientCores: otherCores,
    rounds: ROUNDS,
  };
  const checks: Check[] = [];
  try {
    await closedLoop(worker.address, requests(64, 7), 16);
    await closedLoop(router.grpcAddress, requests(64, 7), 16);
    for (const { concurrency, requests: n } of LEVELS) {
      const direct: Sample[] = [];
      const routed: Sample[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const load = requests(n, round);
        const [first, second] =
          round % 2 === 0 ? [worker.address, router.grpcAddress] : [router.grpcAddress, worker.address];
        const a = await closedLoop(first, load, concurrency);
        const b = await closedLoop(second, load, concurrency);
        (first === worker.address ? direct : routed).push(...a);
        (first === worker.address ? routed : direct).push(...b);
      }
      const stats = (samples: Sample[]) => ({
        p50: percentile(
          samples.map((s) => s.latency),
          50,
        ),
        p99: percentile(
          samples.map((s) => s.latency),
          99,
        ),
        ttftP50: percentile(
          samples.map((s) => s.ttft),
          50,
        ),
        requests: samples.length,
      });
      const d = stats(direct);
      const r = stats(routed);
      figures[`c${concurrency}`] = { directMs: d, routerMs: r };
      checks.push(
        check(`overhead c=${concurrency}: p50 router / direct`, r.p50 / d.p50, "<=", 1.1),
        check(`overhead c=${concurrency}: p50 router - direct (ms)`, r.p50 - d.p50, "<=", 1),
        check(`overhead c=${concurrency}: p99 router - direct (ms)`, r.p99 - d.p99, "<=", 3),
      );
      console.log(
        `overhead c=${concurrency}: direct p50 ${d.p50.toFixed(2)} p99 ${d.p99.toFixed(2)}; router p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms`,
      );
    }
  } finally {
    pin(process.pid, `0-${cores - 1}`);
    await router.stop();
    await worker.stop();
  }
  return { figures, checks };
}

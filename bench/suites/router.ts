// `npm run bench -- router [overhead|cache|bounded ...]`: the router (issue 4), with workers on the
// `tiny` preset so the router is what is measured, every ratio measured in this one run:
//   a. overhead: end-to-end latency through the router vs through a bare pass-through proxy (the floor
//      of one extra hop) and straight to the worker, 32-token generations at 1, 16 and 64 concurrent,
//      router and proxy on a core of their own; the router's GC pauses under each load (issue 22);
//   b. cache-aware routing: TTFT p50 of consistent hashing on prefix blocks vs round-robin over 4
//      workers whose KV pools hold fewer prefixes than the workload has, and with no prefix reuse;
//   c. bounded loads under Zipf(1.1) session keys: peak in-flight per worker vs the mean, share of
//      requests on their hash home, and keys moved by adding a 5th worker.
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import { type Check, writeResult } from "../report.ts";
import { boundedLoads } from "./router/bounded-loads.ts";
import { cacheAware } from "./router/cache-aware.ts";
import { overhead } from "./router/overhead.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/tiny-llama");
/** onnxruntime threads per worker: the machine's cores are shared by workers, router and clients. */
const THREADS = 1;

export async function run(args: string[]): Promise<void> {
  const parts = args.length > 0 ? args : ["overhead", "cache", "bounded"];
  if (!existsSync(path.join(MODEL_DIR, "config.json")))
    await createCheckpoint({ arch: "llama", preset: "tiny", seed: 1, out: MODEL_DIR });
  // Other work on the machine (other processes' tests) shows up here: the load average when the run
  // started and when it ended.
  const figures: Record<string, unknown> = { workerThreads: THREADS, loadAverageAtStart: loadavg() };
  const checks: Check[] = [];
  for (const part of parts) {
    const measured =
      part === "overhead"
        ? await overhead(MODEL_DIR, THREADS)
        : part === "cache"
          ? await cacheAware(MODEL_DIR, THREADS)
          : await boundedLoads(MODEL_DIR, THREADS);
    figures[part] = measured.figures;
    checks.push(...measured.checks);
  }
  figures["loadAverageAtEnd"] = loadavg();
  writeResult({
    suite: "router",
    description:
      "Router over tiny-preset workers (1 onnxruntime thread each), grpc-js clients in the bench process, on a machine other work may share: a. end-to-end latency of 32-token generations through the router (over its tessera.v1.Relay stream to the worker) vs straight to one worker, and through a bare pass-through HTTP/2 proxy (the floor one extra hop costs), at 1, 16, 64 concurrent, closed-loop rounds in rotating order (32 of 16 requests at 1 concurrent, 12 of 160 at 16, 8 of 640 at 64; the first `concurrency` requests of a round not counted), the router and the proxy started pinned to the last core (each then sees one CPU: the router runs with 8 MiB semi-spaces and single-threaded GC, services/cli/router-process.ts, and the proxy with the same node flags), the worker and the clients on the other(s); the router's GC pauses during its rounds recorded with perf_hooks' GC observer (histogram per level); checks against the bare proxy: p50 +0.3 ms at each level, p99 +3 ms at 16 and +5 ms at 64, longest GC pause at 64 <= 5 ms; b. TTFT p50 of consistent hashing on prefix blocks vs round-robin, 4 workers with 192-block KV pools, 16 tenants × 448-token system prompts + 16-token questions, 4 concurrent, 4 alternating rounds; and the same with every prompt unique; c. Zipf(1.1) session keys over 1,000 keys, 64 concurrent over 4 workers, epsilon 0.15 (and the default 0.25 in the figures): peak in-flight per worker / mean in flight per worker, share of requests on their key's home, keys moved when a 5th worker joins",
    figures,
    checks,
  });
}

// The router alone under closed-loop load, for looking into its garbage collection (issue 22; not a
// suite of its own): a tiny worker and the load generator on core 0, the router started on core 1
// (so it sees one CPU, as in the overhead bench), `concurrency` generations of 32 tokens for `seconds`;
// prints the router's GC pauses by kind (perf_hooks' GC observer), tokens relayed per second and
// latency. Extra node flags go to the router: --trace-gc-nvp (its stdout goes to `trace-file`),
// --max-semi-space-size=N, or `--import bench/suites/router/heap-sampler.ts` with the sampler's
// environment to attribute allocations.
// Usage: node bench/suites/router/gc-probe.ts <concurrency> <seconds> <trace-file> [node flags...]
import { once } from "node:events";
import { existsSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import { GcRecorder, summarize } from "./gc-pauses.ts";
import { closedLoop, percentile, type Request } from "./load.ts";
import { pin, startRouter, startWorker } from "./processes.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../../.tessera/bench/tiny-llama");
const [concurrencyArg, secondsArg, traceFile, ...flags] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const seconds = Number(secondsArg);
if (!(concurrency > 0 && seconds > 0 && traceFile))
  throw new Error("usage: gc-probe.ts <concurrency> <seconds> <trace-file> [node flags...]");
if (!existsSync(path.join(MODEL_DIR, "config.json")))
  await createCheckpoint({ arch: "llama", preset: "tiny", seed: 1, out: MODEL_DIR });

function requests(n: number, salt: number): Request[] {
  return Array.from({ length: n }, (_, i) => ({
    prompt: {
      case: "tokenIds" as const,
      value: { ids: Array.from({ length: 24 }, (_, j) => 3 + ((i * 131 + j * 17 + salt) % 500)) },
    },
    sampling: { maxTokens: 32, ignoreEos: true },
  }));
}

const gc = new GcRecorder("probe");
const worker = await startWorker(MODEL_DIR, {}, 1);
const observer = gc.spawnOptions();
const router = await startRouter(
  MODEL_DIR,
  [worker],
  { cache: { enabled: false, coalesce: false } },
  {
    nodeArgs: [...(observer.nodeArgs ?? []), ...flags],
    env: { ...observer.env },
    stdout: openSync(traceFile, "w"),
    cores: "1",
  },
);
const pid = router.child.pid!;
pin(worker.child.pid!, "0");
pin(process.pid, "0");
try {
  console.log(`router: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")}`);
  await closedLoop(router.grpcAddress, requests(256, 1), 16);
  await gc.take(pid);
  const start = performance.now();
  const latencies: number[] = [];
  let tokens = 0;
  for (let round = 0; performance.now() - start < seconds * 1000; round++) {
    const samples = await closedLoop(router.grpcAddress, requests(concurrency * 10, round), concurrency);
    for (const s of samples) tokens += s.tokens;
    latencies.push(...samples.slice(concurrency).map((s) => s.latency));
  }
  const ms = performance.now() - start;
  const pauses = summarize(await gc.take(pid), ms);
  console.log(JSON.stringify({ byKind: pauses.byKind, histogram: pauses.histogram, p50Ms: pauses.p50Ms }));
  console.log(
    `tokens/s ${((tokens * 1000) / ms).toFixed(0)}; latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
  );
} finally {
  // A graceful stop first, so that flags writing at exit (--cpu-prof, --heap-prof) get to write.
  router.child.kill("SIGTERM");
  await Promise.race([once(router.child, "exit"), delay(5_000)]);
  await router.stop();
  await worker.stop();
}

// Scratch probe: worker + router, c=N closed-loop load for S seconds, router with given node flags.
// node bench/suites/router/gc-probe.ts <concurrency> <seconds> <outfile> [node flags...]
import { existsSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import { closedLoop, percentile, type Request } from "./load.ts";
import { pin, startRouter, startWorker } from "./processes.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../../.tessera/bench/tiny-llama");
const [c, secs, out, ...flags] = process.argv.slice(2);
if (!existsSync(path.join(MODEL_DIR, "config.json")))
  await createCheckpoint({ arch: "llama", preset: "tiny", seed: 1, out: MODEL_DIR });
const concurrency = Number(c);
function requests(n: number, salt: number): Request[] {
  return Array.from({ length: n }, (_, i) => ({
    prompt: {
      case: "tokenIds" as const,
      value: { ids: Array.from({ length: 24 }, (_, j) => 3 + ((i * 131 + j * 17 + salt) % 500)) },
    },
    sampling: { maxTokens: 32, ignoreEos: true },
  }));
}
const worker = await startWorker(MODEL_DIR, {}, 1);
const GC_FILE = `/tmp/rgc/gc-${process.pid}.json`;
const router = await startRouter(
  MODEL_DIR,
  [worker],
  { cache: { enabled: false, coalesce: false } },
  {
    nodeArgs: ["--import", path.join(import.meta.dirname, "gc-observer.ts"), ...flags],
    env: { TESSERA_BENCH_GC_FILE: GC_FILE },
    stdout: openSync(out ?? "/dev/null", "w"),
  cores: "1",
  },
);
pin(worker.child.pid!, "0");
pin(process.pid, "0");
console.log("router pid", router.child.pid, readFileSync(`/proc/${router.child.pid}/cmdline`, "utf8").split("\0").join(" "));
await closedLoop(router.grpcAddress, requests(256, 1), 16);
const { rmSync, existsSync: ex } = await import("node:fs");
const takePauses = async () => {
  rmSync(GC_FILE, { force: true });
  process.kill(router.child.pid!, "SIGUSR2");
  while (!ex(GC_FILE)) await new Promise((r) => setTimeout(r, 20));
  return (JSON.parse(readFileSync(GC_FILE, "utf8")) as { pauses: [number, number, number][] }).pauses;
};
await takePauses();
const t0 = performance.now();
const lat: number[] = [];
let round = 0;
while (performance.now() - t0 < Number(secs) * 1000) {
  const s = await closedLoop(router.grpcAddress, requests(concurrency * 10, round++), concurrency);
  lat.push(...s.slice(concurrency).map((x) => x.latency));
}
const secsRun = (performance.now() - t0) / 1000;
await new Promise((r) => setTimeout(r, 100));
const pauses = await takePauses();
const byKind = new Map<number, number[]>();
for (const [, ms, kind] of pauses) byKind.set(kind, [...(byKind.get(kind) ?? []), ms]);
for (const [kind, ms] of byKind) {
  ms.sort((a, b) => a - b);
  console.log(
    `gc kind ${kind}: n=${ms.length} p50 ${percentile(ms, 50).toFixed(2)} p99 ${percentile(ms, 99).toFixed(2)} max ${ms.at(-1)!.toFixed(2)} sum ${ms.reduce((a, b) => a + b, 0).toFixed(0)}`,
  );
}
console.log(`tokens/s ${((lat.length * 32) / secsRun).toFixed(0)} (approx)`);
console.log(
  `c=${concurrency} n=${lat.length} p50 ${percentile(lat, 50).toFixed(2)} p99 ${percentile(lat, 99).toFixed(2)}`,
);
router.child.kill("SIGINT");
await new Promise((r) => setTimeout(r, 1500));
await router.stop();
await worker.stop();
process.exit(0);

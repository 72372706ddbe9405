// Loaded into a benchmark's router process (`node --import gc-observer.ts`): records each of its
// garbage-collection pauses with perf_hooks' GC observer, and on SIGUSR2 writes those recorded so far
// to the file TESSERA_BENCH_GC_FILE names ({ pauses: [[startUnixMs, ms, kind]] }, kind as Node's
// NODE_PERFORMANCE_GC_* constants: 1 scavenge, 4 mark-compact, 8 incremental marking, 16 weak
// callbacks), then forgets them. The benchmark signals after each round and keeps the pauses that
// began while that round ran, so what it reports is the router's own pauses under one load.
import { renameSync, writeFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";

const file = process.env["TESSERA_BENCH_GC_FILE"];
if (file) {
  let pauses: [number, number, number][] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      pauses.push([performance.timeOrigin + entry.startTime, entry.duration, kind]);
    }
  }).observe({ entryTypes: ["gc"] });
  process.on("SIGUSR2", () => {
    const taken = pauses;
    pauses = [];
    // Written whole and then renamed, so a reader never sees half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify({ pauses: taken }));
    renameSync(`${file}.tmp`, file);
  });
}

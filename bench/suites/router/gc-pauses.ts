// The benchmark's side of gc-observer.ts: the node flags and environment that make a process record
// its garbage-collection pauses, taking what it recorded, and the summary the results report (a
// histogram of pause lengths, the longest, and the share of the time the process spent paused).
import { existsSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { percentile } from "./load.ts";
import type { SpawnOptions } from "./processes.ts";

/** [start (ms since the epoch), duration (ms), kind (NODE_PERFORMANCE_GC_* flags)] */
export type Pause = [number, number, number];

/** Upper bounds (ms) of the histogram's buckets; the last bucket holds everything longer. */
const BUCKETS_MS = [0.5, 1, 2, 3, 5, 10, 20, 50, 100];
/** perf_hooks.constants.NODE_PERFORMANCE_GC_*: the kind of a pause. */
const KINDS: Record<number, string> = {
  1: "scavenge",
  2: "minorMarkSweep",
  4: "markCompact",
  8: "incrementalMarking",
  16: "weakCallbacks",
};

export class GcRecorder {
  readonly file: string;

  constructor(name: string) {
    this.file = path.join(os.tmpdir(), `tessera-bench-gc-${process.pid}-${name}.json`);
  }

  /** What the recorded process is started with. */
  spawnOptions(): Pick<SpawnOptions, "nodeArgs" | "env"> {
    return {
      nodeArgs: ["--import", path.join(import.meta.dirname, "gc-observer.ts")],
      env: { TESSERA_BENCH_GC_FILE: this.file },
    };
  }

  /** The pauses the process recorded since the last take (it forgets them). */
  async take(pid: number): Promise<Pause[]> {
    // The observer is told of a pause a moment after it: let the last ones of a round arrive.
    await delay(50);
    rmSync(this.file, { force: true });
    process.kill(pid, "SIGUSR2");
    for (let i = 0; !existsSync(this.file); i++) {
      if (i > 500) throw new Error(`no GC pauses from process ${pid}`);
      await delay(10);
    }
    const { pauses } = JSON.parse(readFileSync(this.file, "utf8")) as { pauses: Pause[] };
    rmSync(this.file, { force: true });
    return pauses;
  }
}

/** The pauses that began within one of the windows ([start, end] in ms since the epoch). */
export function within(pauses: readonly Pause[], windows: readonly [number, number][]): Pause[] {
  return pauses.filter(([start]) => windows.some(([from, to]) => start >= from && start <= to));
}

export function summarize(pauses: readonly Pause[], loadMs: number) {
  const ms = pauses.map(([, duration]) => duration);
  const histogram: Record<string, number> = {};
  for (let i = 0; i <= BUCKETS_MS.length; i++) {
    const label = i < BUCKETS_MS.length ? `<=${BUCKETS_MS[i]}ms` : `>${BUCKETS_MS.at(-1)}ms`;
    histogram[label] = ms.filter(
      (d) => d <= (BUCKETS_MS[i] ?? Number.POSITIVE_INFINITY) && (i === 0 || d > BUCKETS_MS[i - 1]!),
    ).length;
  }
  const byKind: Record<string, { pauses: number; maxMs: number; totalMs: number }> = {};
  for (const [, duration, kind] of pauses) {
    const name = KINDS[kind] ?? `kind${kind}`;
    const k = byKind[name] ?? { pauses: 0, maxMs: 0, totalMs: 0 };
    byKind[name] = k;
    k.pauses++;
    k.maxMs = Math.max(k.maxMs, duration);
    k.totalMs += duration;
  }
  const totalMs = ms.reduce((a, b) => a + b, 0);
  return {
    pauses: ms.length,
    maxMs: ms.length === 0 ? 0 : Math.max(...ms),
    p50Ms: ms.length === 0 ? 0 : percentile(ms, 50),
    p99Ms: ms.length === 0 ? 0 : percentile(ms, 99),
    totalMs,
    /** Share of the load's wall time the process was paused. */
    pausedShare: loadMs > 0 ? totalMs / loadMs : 0,
    loadMs,
    byKind,
    histogram,
  };
}

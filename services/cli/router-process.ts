// The V8 settings `tessera router` runs under (issue 22: no garbage-collection pause a user can see).
// A router's heap holds little for long (tokenizers, the rings); what it allocates is per request and
// per relayed token, and nearly all of it dies within the request. Measured with the router bench's
// c=64 load (bench/suites/router, docs/DESIGN.md "Router garbage collection"):
// - young generation at 8 MiB semi-spaces. What a scavenge copies is the requests in flight (~10 KB
//   each), whatever the size; the size decides how often a request outlives two scavenges and is
//   promoted, and how much young garbage a mark-compact evacuates: it promotes what its incremental
//   marking found alive, most of the young generation's floating garbage, so at 16 MiB one took 6-15
//   ms (2-4.5 MB promoted). With nothing long-lived in the router churning a Map (relay-channel.ts),
//   the bench's three paths taking turns at c=64 gave (scavenge median / longest, mark-compacts):
//   4 MiB 1.6 / 9.8 ms, 7 mark-compacts of 5-8.4 ms (a request outlives two ~75 ms intervals, ~250 KB
//   promoted per scavenge); 8 MiB 1.9-2.0 / 3.3-5.3 ms, mark-compacts of 4.6-9.2 ms; 16 MiB
//   2.3-2.5 / 5.8-7.3 ms, mark-compacts of 6.3-15.4 ms (docs/DESIGN.md "Router garbage collection").
//   V8 would otherwise grow them to 32 MiB.
// - and 8 MiB from the start: the smallest size too. V8 shrinks an idle process's young generation
//   (to 1-2 MiB in the bench's gaps between rounds) and grows it back only step by step under load,
//   so a burst after idle ran its first scavenges every ~25-50 ms, each promoting every request in
//   flight: 240 KB promoted per scavenge (median), and 6 mark-compacts in the c=64 rounds of a probe
//   run. Held at 8 MiB: 47 KB, 2 mark-compacts; in eight router bench runs, 0-1 in the c=64 rounds.
//   Held at 16 MiB a mark-compact took 10.7 ms (a larger young generation to evacuate). It costs an
//   idle router 16 MiB of young generation it would otherwise give back.
// - on one CPU, single-threaded GC: a parallel scavenge or compaction hands work to V8's helper
//   threads and the main thread waits for them, but on one CPU they only run when the main thread
//   gives way, so the wait is as long as the scheduler makes it (pauses of 50-100 ms for ~1 ms of
//   work). With more CPUs the helpers run beside it and are kept.
// Read only when a process starts, so the router re-executes itself (same pid, process.execve) with
// whichever is missing; flags the caller gave (command line or NODE_OPTIONS) are kept.
import { availableParallelism } from "node:os";
import { withSemiSpace } from "./serve-process.ts";

export const SINGLE_THREADED_GC_FLAG = "--single-threaded-gc";
/** Semi-spaces of 8 MiB, from the start and through idle time. */
export const ROUTER_SEMI_SPACE_FLAGS = ["--max-semi-space-size=8", "--min-semi-space-size=8"] as const;

/** The node flags a router adds to `execArgv`, or undefined when none is missing. */
export function routerNodeFlags(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  cpus: number,
): string[] | undefined {
  const given = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)];
  const gcFlag = /^--(no[-_])?(single[-_]threaded([-_]gc)?|parallel[-_]scavenge|concurrent[-_]marking)\b/;
  const flags = withSemiSpace(execArgv, nodeOptions, ROUTER_SEMI_SPACE_FLAGS) ?? [...execArgv];
  if (cpus <= 1 && !given.some((arg) => gcFlag.test(arg))) flags.push(SINGLE_THREADED_GC_FLAG);
  return flags.length === execArgv.length ? undefined : flags;
}

/**
 * Replaces this process by itself with the flags that are missing (on Linux, where Node has
 * process.execve); returns only when nothing was to be done.
 */
export function execWithRouterSettings(): void {
  if (process.platform !== "linux" || typeof process.execve !== "function") return;
  const flags = routerNodeFlags(process.execArgv, process.env["NODE_OPTIONS"], availableParallelism());
  if (flags === undefined) return;
  process.execve(process.execPath, [process.execPath, ...flags, ...process.argv.slice(1)], process.env);
}

// The V8 settings `tessera router` runs under (issue 22: no garbage-collection pause a user can see).
// A router's heap holds little for long (tokenizers, the rings); what it allocates is per request and
// per relayed token, and nearly all of it dies within the request. Measured with the router bench's
// c=64 load (bench/suites/router, docs/DESIGN.md "Router garbage collection"):
// - young generation at 16 MiB semi-spaces: V8 otherwise grows them to 32 MiB, where a scavenge
//   copies ~1.5 MB (median 6 ms). What a scavenge copies is mostly the requests in flight (~13 KB
//   each), whatever the size; what decides the size is how much of that is promoted, since request
//   state promoted to the old generation is what mark-compacts (7-25 ms pauses: evacuating the young
//   generation, finalizing the promoted requests' external header strings) are made of. At 8 MiB a
//   scavenge came every ~130 ms, shorter than a 32-token generation at 64 concurrent, so most
//   requests were promoted (~520 KB per scavenge, a mark-compact every ~8 s); at 16 MiB half as many
//   scavenges promote ~360 KB each, a third of the old generation's growth (gc-probe at c=64: no
//   mark-compact in 30 s against 3-4), for a median scavenge of ~4 ms instead of ~3.
// - on one CPU, single-threaded GC: a parallel scavenge or compaction hands work to V8's helper
//   threads and the main thread waits for them, but on one CPU they only run when the main thread
//   gives way, so the wait is as long as the scheduler makes it (pauses of 50-100 ms for ~1 ms of
//   work). With more CPUs the helpers run beside it and are kept.
// Read only when a process starts, so the router re-executes itself (same pid, process.execve) with
// whichever is missing; flags the caller gave (command line or NODE_OPTIONS) are kept.
import { availableParallelism } from "node:os";
import { withSemiSpace } from "./serve-process.ts";

export const SINGLE_THREADED_GC_FLAG = "--single-threaded-gc";
export const ROUTER_SEMI_SPACE_FLAG = "--max-semi-space-size=16";

/** The node flags a router adds to `execArgv`, or undefined when none is missing. */
export function routerNodeFlags(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  cpus: number,
): string[] | undefined {
  const given = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)];
  const gcFlag = /^--(no[-_])?(single[-_]threaded([-_]gc)?|parallel[-_]scavenge|concurrent[-_]marking)\b/;
  const flags = withSemiSpace(execArgv, nodeOptions, ROUTER_SEMI_SPACE_FLAG) ?? [...execArgv];
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

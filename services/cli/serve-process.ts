// The process settings `tessera serve` runs under (issue 18: resident set ≤ 1.3 × weights + KV pool),
// measured on the base preset (336 MiB of weights, a 512 MiB KV pool; bench/suites/engine.ts, f):
// - glibc malloc thresholds fixed at 128 KiB. glibc raises its mmap threshold each time a large mapped
//   block is freed (up to 32 MiB), so once the load has freed the parsed copy of the graph's weights
//   (and the attention race its losing session), every later block under 32 MiB comes from the malloc
//   arenas of the model thread and onnxruntime's threads, and what is freed there stays resident:
//   1.5-2.5 GiB after load, 1.0 GiB of it in the arenas' 64 MiB heaps; 0.6 GiB with the thresholds.
// - the main thread's young generation at 2 MiB semi-spaces: under 64 streams V8 grew it to 64 MiB
//   (11 MiB in use); at 8 MiB semi-spaces it held 16 MiB, and the server 1140-1164 MiB after 4 rounds
//   of 64 streams against 1120-1144 at 2 MiB (rounds as long); the model thread's is capped where it
//   starts (parallel/member-handle.ts). The router keeps 8 MiB (router-process.ts).
// Both are read only when a process starts, so serve re-executes itself (same pid, process.execve)
// with whichever is missing; settings the caller gave are kept. Other C libraries ignore the variable.

export const MALLOC_TUNABLES = ["glibc.malloc.mmap_threshold=131072", "glibc.malloc.trim_threshold=131072"];
export const SERVE_SEMI_SPACE_FLAGS = ["--max-semi-space-size=2"] as const;

/** GLIBC_TUNABLES with our malloc settings added to `current`, or undefined when it already has them. */
export function withMallocTunables(current: string | undefined): string | undefined {
  const given = (current ?? "").split(":").filter((t) => t !== "");
  const names = new Set(given.map((t) => t.split("=")[0]));
  const missing = MALLOC_TUNABLES.filter((t) => !names.has(t.split("=")[0]));
  return missing.length === 0 ? undefined : [...given, ...missing].join(":");
}

/**
 * Node flags with `flags` (semi-space sizes) added, or undefined when the flags or NODE_OPTIONS set a
 * semi-space size, smallest or largest: the caller's choice is kept whole.
 */
export function withSemiSpace(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  flags: readonly string[],
): string[] | undefined {
  const sets = (arg: string) => /^--(max|min)[-_]semi[-_]space[-_]size\b/.test(arg);
  if (execArgv.some(sets) || (nodeOptions ?? "").split(/\s+/).some(sets)) return undefined;
  return [...execArgv, ...flags];
}

/**
 * Replaces this process by itself with the settings that are missing (on Linux, where Node has
 * process.execve); returns only when nothing was to be done.
 */
export function execWithServeSettings(): void {
  if (process.platform !== "linux" || typeof process.execve !== "function") return;
  const tunables = withMallocTunables(process.env["GLIBC_TUNABLES"]);
  const execArgv = withSemiSpace(process.execArgv, process.env["NODE_OPTIONS"], SERVE_SEMI_SPACE_FLAGS);
  if (tunables === undefined && execArgv === undefined) return;
  process.execve(
    process.execPath,
    [process.execPath, ...(execArgv ?? process.execArgv), ...process.argv.slice(1)],
    {
      ...process.env,
      ...(tunables !== undefined && { GLIBC_TUNABLES: tunables }),
    },
  );
}

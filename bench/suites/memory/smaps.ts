// Where a process's resident set lies, by kind of mapping, from /proc/<pid>/smaps (issue 18: the
// engine suite says what `tessera serve` holds beyond its weights and KV pool). What smaps can tell
// apart without help from the process:
// - file: mapped files (the node binary, onnxruntime's library, other shared objects);
// - brkHeap: the main malloc arena's heap ([heap]);
// - threadArenas: glibc's per-thread malloc arenas, anonymous NORESERVE mappings on 64 MiB boundaries
//   (glibc reserves each arena heap as 64 MiB of address space, aligned so that a chunk finds its heap);
// - v8Reserved: V8's reserved ranges (code space and its other cages: NORESERVE, marked don't-fork);
// - stacks: the main thread's stack ([stack]) and the threads' (mapped MAP_STACK: no huge pages, "nh");
// - otherAnonymous: the rest, private anonymous memory: the weights onnxruntime holds, the KV pool's
//   arrays, onnxruntime's arena, V8's heap pages and blocks malloc maps on their own. The kernel merges
//   neighbouring anonymous mappings, so these cannot be told apart here; V8's heaps come from the
//   process's diagnostic report instead (serve-rounds.ts).

export interface ResidentBreakdown {
  file: number;
  brkHeap: number;
  threadArenas: number;
  v8Reserved: number;
  stacks: number;
  otherAnonymous: number;
}

export type MappingKind = keyof ResidentBreakdown;

const ARENA_ALIGNMENT = 64 * 2 ** 20;

interface Mapping {
  start: number;
  path: string;
  rss: number;
  flags: Set<string>;
}

/** The kind of one mapping (see the file's header). */
export function mappingKind(m: Mapping): MappingKind {
  if (m.path === "[heap]") return "brkHeap";
  if (m.path === "[stack]") return "stacks";
  if (m.path !== "" && !m.path.startsWith("[")) return "file";
  if (m.flags.has("nh")) return "stacks";
  if (m.flags.has("nr") && m.flags.has("dc")) return "v8Reserved";
  if (m.flags.has("nr") && m.start % ARENA_ALIGNMENT === 0) return "threadArenas";
  return "otherAnonymous";
}

/** Resident bytes by kind of mapping, from the text of /proc/<pid>/smaps. */
export function residentBreakdown(smaps: string): ResidentBreakdown {
  const out: ResidentBreakdown = {
    file: 0,
    brkHeap: 0,
    threadArenas: 0,
    v8Reserved: 0,
    stacks: 0,
    otherAnonymous: 0,
  };
  const flush = (m: Mapping | undefined) => {
    if (m) out[mappingKind(m)] += m.rss;
  };
  let current: Mapping | undefined;
  for (const line of smaps.split("\n")) {
    const header = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      flush(current);
      current = { start: Number.parseInt(header[1]!, 16), path: header[2]!.trim(), rss: 0, flags: new Set() };
      continue;
    }
    if (!current) continue;
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) current.rss = Number(rss[1]) * 1024;
    if (line.startsWith("VmFlags:")) current.flags = new Set(line.slice(8).trim().split(/\s+/));
  }
  flush(current);
  return out;
}

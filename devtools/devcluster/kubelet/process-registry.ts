// The host processes of this node's containers, kept in a file so that `tessera dev down` can
// kill what a crashed kubelet left behind. Every container carries TESSERA_DEV_CLUSTER=<id> in
// its environment; a listed pid is only killed when /proc says it still carries that mark, so
// a recycled pid of an unrelated process is never touched.
import { readFileSync, renameSync, writeFileSync } from "node:fs";

export const CLUSTER_ENV = "TESSERA_DEV_CLUSTER";

export class ProcessRegistry {
  readonly #file: string | undefined;
  readonly #pids = new Set<number>();

  constructor(file: string | undefined) {
    this.#file = file;
  }

  get pids(): number[] {
    return [...this.#pids];
  }

  set(pid: number, running: boolean): void {
    if (running) this.#pids.add(pid);
    else this.#pids.delete(pid);
    if (!this.#file) return;
    const tmp = `${this.#file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ pids: this.pids }));
    renameSync(tmp, this.#file);
  }
}

/** Whether the process runs and carries this cluster's mark (Linux /proc). */
export function isClusterProcess(pid: number, clusterId: string): boolean {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    return environ.includes(`${CLUSTER_ENV}=${clusterId}`);
  } catch {
    return false;
  }
}

/** Kills (SIGKILL, whole process group) every listed process that still carries the mark; returns their pids. */
export function killLeftovers(file: string, clusterId: string): number[] {
  let pids: number[] = [];
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { pids?: unknown };
    pids = Array.isArray(parsed.pids) ? parsed.pids.filter((p): p is number => Number.isInteger(p)) : [];
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const pid of pids) {
    if (!isClusterProcess(pid, clusterId)) continue;
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {}
    }
    killed.push(pid);
  }
  return killed;
}

// Where `tessera dev` keeps a running cluster's files (default .tessera/dev/) and the state
// file that says which process runs it: pid, URL, kubeconfig, cluster id.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

export interface DevPaths {
  dir: string;
  /** pid, URL and cluster id of the running cluster (present while it runs). */
  state: string;
  kubeconfig: string;
  /** The cluster process's log (JSON lines). */
  log: string;
  /** The pids of pod processes (for cleanup after a crash). */
  processes: string;
  /** The kubelet's folders: pods (logs, emptyDir) and volumes (PVCs). */
  kubeletRoot: string;
}

export function devPaths(dir: string): DevPaths {
  const root = path.resolve(dir);
  return {
    dir: root,
    state: path.join(root, "state.json"),
    kubeconfig: path.join(root, "kubeconfig"),
    log: path.join(root, "cluster.log"),
    processes: path.join(root, "processes.json"),
    kubeletRoot: path.join(root, "kubelet"),
  };
}

export const devStateSchema = z.object({
  pid: z.number().int().positive(),
  url: z.string(),
  kubeconfig: z.string(),
  clusterId: z.string(),
  nodeName: z.string(),
  podCidr: z.string(),
  startedAt: z.string(),
  stateFile: z.string().optional(),
});

export type DevState = z.infer<typeof devStateSchema>;

export function readDevState(paths: DevPaths): DevState | undefined {
  try {
    const parsed = devStateSchema.safeParse(JSON.parse(readFileSync(paths.state, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function writeDevState(paths: DevPaths, state: DevState): void {
  mkdirSync(paths.dir, { recursive: true });
  const tmp = `${paths.state}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, paths.state);
}

export function removeDevState(paths: DevPaths): void {
  rmSync(paths.state, { force: true });
}

/** Whether a process with this pid runs (zombies do not count). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

// `tessera dev up` / `down` / `status` seen from the command line. `up` starts the cluster process
// detached (its own session, output to the dev folder's cluster.log) and returns once it reports
// ready over IPC; `down` sends it SIGTERM, waits for it to stop its pods and exit (SIGKILL after a
// deadline), then kills any pod process a crashed cluster left behind (processes.json).
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { Code, TesseraError } from "../../../services/kernel/errors.ts";
import { killLeftovers } from "../kubelet/process-registry.ts";
import {
  type DevPaths,
  type DevState,
  devPaths,
  isAlive,
  readDevState,
  removeDevState,
} from "./dev-state.ts";

export interface UpResult {
  state: DevState;
  alreadyRunning: boolean;
}

/** The running cluster of this dev folder, if any (a stale state file is ignored). */
export function devStatus(dir: string): DevState | undefined {
  const state = readDevState(devPaths(dir));
  return state && isAlive(state.pid) ? state : undefined;
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/**
 * Starts `command args` (the CLI's `dev run`) in the background and waits until it sends
 * { type: "ready", state } over IPC.
 */
export async function devUp(
  dir: string,
  command: string,
  args: string[],
  timeoutMs = 60_000,
): Promise<UpResult> {
  const paths = devPaths(dir);
  const running = devStatus(dir);
  if (running) return { state: running, alreadyRunning: true };
  cleanupAfterCrash(paths);
  mkdirSync(paths.dir, { recursive: true });
  const log = openSync(paths.log, "a");
  let child: ChildProcess;
  try {
    child = spawn(command, args, { detached: true, stdio: ["ignore", log, log, "ipc"] });
  } finally {
    closeSync(log);
  }
  const state = await new Promise<DevState>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new TesseraError(
          Code.DEADLINE_EXCEEDED,
          `the dev cluster did not start within ${timeoutMs / 1000}s:\n${tail(paths.log)}`,
        ),
      );
    }, timeoutMs);
    child.on("message", (message: { type?: string; state?: DevState }) => {
      if (message.type !== "ready" || !message.state) return;
      clearTimeout(timer);
      resolve(message.state);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(
        new TesseraError(
          Code.INTERNAL,
          `the dev cluster exited (${code}) while starting:\n${tail(paths.log)}`,
        ),
      );
    });
  });
  child.removeAllListeners("exit");
  if (child.connected) child.disconnect();
  child.unref();
  return { state, alreadyRunning: false };
}

export interface DownResult {
  /** The cluster process that was stopped, if one ran. */
  stopped?: number;
  /** Pod processes a crashed cluster left behind, killed now. */
  leftovers: number[];
}

/** Stops the cluster of this dev folder and every process it started. */
export async function devDown(dir: string, timeoutMs = 30_000): Promise<DownResult> {
  const paths = devPaths(dir);
  const state = readDevState(paths);
  let stopped: number | undefined;
  if (state && isAlive(state.pid)) {
    stopped = state.pid;
    process.kill(state.pid, "SIGTERM");
    const deadline = Date.now() + timeoutMs;
    while (isAlive(state.pid) && Date.now() < deadline) await delay(50);
    if (isAlive(state.pid)) {
      for (const target of [-state.pid, state.pid]) {
        try {
          process.kill(target, "SIGKILL");
        } catch {}
      }
      while (isAlive(state.pid)) await delay(20);
    }
  }
  const leftovers = state ? killLeftovers(paths.processes, state.clusterId) : [];
  removeDevState(paths);
  rmSync(paths.kubeconfig, { force: true });
  rmSync(paths.processes, { force: true });
  return { ...(stopped !== undefined ? { stopped } : {}), leftovers };
}

/** A state file whose process is gone: kill what that cluster left behind before starting anew. */
function cleanupAfterCrash(paths: DevPaths): void {
  const stale = readDevState(paths);
  if (!stale) return;
  killLeftovers(paths.processes, stale.clusterId);
  removeDevState(paths);
}

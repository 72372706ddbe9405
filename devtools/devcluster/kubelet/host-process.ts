// Containers as host processes. Each container runs in its own process group (detached), so a
// signal reaches the whole tree a shell may have started, and when the main process exits the
// rest of its group is killed too, as a container's processes die with its init process.
import { spawn } from "node:child_process";
import { constants } from "node:os";

export interface LaunchSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  onOutput(stream: "stdout" | "stderr", chunk: Uint8Array): void;
}

export interface ProcessExit {
  /** The exit code, or 128 + the signal number when a signal ended it (as container runtimes report). */
  exitCode: number;
  signal?: NodeJS.Signals;
  /** Why the process could not start (e.g. the command was not found). */
  error?: string;
}

export interface HostProcess {
  /** Undefined when the process could not start. */
  readonly pid: number | undefined;
  /** Resolves once the process has ended and its output was read. */
  readonly exited: Promise<ProcessExit>;
  /** Signals the whole process group; does nothing once it is gone. */
  kill(signal: NodeJS.Signals): void;
}

export type ProcessLauncher = (spec: LaunchSpec) => HostProcess;

export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone.
  }
}

/** How long to wait for a dead process's pipes to close (a grandchild may have kept them open). */
const OUTPUT_GRACE_MS = 1_000;

export const hostProcessLauncher: ProcessLauncher = (spec) => {
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => spec.onOutput("stdout", chunk));
  child.stderr?.on("data", (chunk: Buffer) => spec.onOutput("stderr", chunk));
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once("error", (err) => {
      if (child.pid === undefined) resolve({ exitCode: 128, error: err.message });
    });
    child.once("exit", (code, signal) => {
      killGroup(child.pid, "SIGKILL");
      const exit: ProcessExit = { exitCode: exitCodeOf(code, signal), ...(signal ? { signal } : {}) };
      const timer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        resolve(exit);
      }, OUTPUT_GRACE_MS);
      timer.unref();
      child.once("close", () => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  });
  return {
    pid: child.pid,
    exited,
    kill: (signal) => killGroup(child.pid, signal),
  };
};

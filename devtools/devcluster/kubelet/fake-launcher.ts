// A process launcher for specs: processes that never run anything and end when the test says
// (or on SIGKILL, or on SIGTERM unless told to ignore it).
import type { HostProcess, LaunchSpec, ProcessExit, ProcessLauncher } from "./host-process.ts";

let nextPid = 40_000;

export class FakeProcess implements HostProcess {
  readonly pid: number;
  readonly spec: LaunchSpec;
  readonly exited: Promise<ProcessExit>;
  readonly signals: NodeJS.Signals[] = [];
  ignoreTerm = false;
  #resolve: (exit: ProcessExit) => void = () => {};
  #done = false;

  constructor(spec: LaunchSpec, pid: number) {
    this.spec = spec;
    this.pid = pid;
    this.exited = new Promise((resolve) => (this.#resolve = resolve));
  }

  get done(): boolean {
    return this.#done;
  }

  exit(exitCode: number, signal?: NodeJS.Signals): void {
    if (this.#done) return;
    this.#done = true;
    this.#resolve({ exitCode, ...(signal ? { signal } : {}) });
  }

  print(text: string, stream: "stdout" | "stderr" = "stdout"): void {
    this.spec.onOutput(stream, Buffer.from(text));
  }

  kill(signal: NodeJS.Signals): void {
    if (this.#done) return;
    this.signals.push(signal);
    if (signal === "SIGKILL") this.exit(137, "SIGKILL");
    else if (signal === "SIGTERM" && !this.ignoreTerm) this.exit(143, "SIGTERM");
  }
}

export class FakeLauncher {
  readonly processes: FakeProcess[] = [];
  readonly launcher: ProcessLauncher = (spec) => {
    const process = new FakeProcess(spec, nextPid++);
    this.processes.push(process);
    return process;
  };

  /** The latest process whose args include `marker` (or the latest of all). */
  latest(marker?: string): FakeProcess | undefined {
    const matching = this.processes.filter(
      (p) => marker === undefined || [p.spec.command, ...p.spec.args].includes(marker),
    );
    return matching[matching.length - 1];
  }

  get running(): FakeProcess[] {
    return this.processes.filter((p) => !p.done);
  }
}

/** Lets promise callbacks and setImmediate work run. */
export async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

// One container of a pod as a sequence of host-process instances: start (once its env and
// volumes could be prepared), probes (startup gates liveness and readiness), restarts by the
// pod's restartPolicy with crash-loop back-off, liveness kills, and stop with a grace period
// (SIGTERM, then SIGKILL). `status()` is the container's ContainerStatus at any moment.
import path from "node:path";
import type { Clock } from "../../../services/kernel/clock.ts";
import type { Result } from "../../../services/kernel/errors.ts";
import type { EventType } from "../../../services/kube/event-recorder.ts";
import { formatTime } from "../../../services/kube/kube-time.ts";
import type {
  Container,
  ContainerState,
  ContainerStatus,
  Probe,
  RestartPolicy,
} from "../objects/pod-types.ts";
import { ContainerLog } from "./container-log.ts";
import type { HostProcess, ProcessExit, ProcessLauncher } from "./host-process.ts";
import type { ProbeChecker, ProbeOutcome } from "./probe-check.ts";
import { type ProbeKind, ProbeLoop } from "./probe-loop.ts";
import { type BackoffSettings, RestartBackoff } from "./restart-backoff.ts";

export interface ContainerLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Maps a path under one of the container's mounts to its host folder (exec probes use it). */
  mapPath?: (text: string) => string;
}

export interface ContainerRunnerDeps {
  clock: Clock;
  launcher: ProcessLauncher;
  checker: ProbeChecker;
  backoff: BackoffSettings;
  configRetryMs: number;
  maxLogLines: number;
  /** Folder for this container's log files (one per instance); none keeps logs in memory only. */
  logDir?: string;
  restartPolicy: RestartPolicy;
  /** Init containers run to completion: only a failure restarts them. */
  init: boolean;
  podIP: string;
  /** The pod's terminationGracePeriodSeconds (liveness kills use it unless the probe sets its own). */
  graceSeconds: number;
  /** Builds the launch anew for every instance; an error keeps the container waiting and retries. */
  prepare: () => Result<ContainerLaunch>;
  onChange: () => void;
  event: (type: EventType, reason: string, message: string) => void;
  onProcess?: (pid: number, running: boolean) => void;
}

type State =
  | { kind: "waiting"; reason: string; message?: string }
  | { kind: "running"; startedAt: number; process: HostProcess }
  | { kind: "terminated"; exit: TerminatedState };

interface TerminatedState {
  exitCode: number;
  reason: string;
  message?: string;
  signal?: number;
  startedAt: number;
  finishedAt: number;
  containerID?: string;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2, SIGHUP: 1 };

export class ContainerRunner {
  readonly container: Container;
  readonly #deps: ContainerRunnerDeps;
  readonly #backoff: RestartBackoff;
  #state: State = { kind: "waiting", reason: "ContainerCreating" };
  #last: TerminatedState | undefined;
  #restartCount = 0;
  #instances = 0;
  #started = false;
  #probes: ProbeLoop[] = [];
  #readiness: ProbeLoop | undefined;
  #killedByProbe = false;
  #stopping = false;
  #cancelTimer: (() => void) | undefined;
  #current: ContainerLog | undefined;
  #previous: ContainerLog | undefined;
  #done: Promise<void> = Promise.resolve();

  constructor(container: Container, deps: ContainerRunnerDeps) {
    this.container = container;
    this.#deps = deps;
    this.#backoff = new RestartBackoff(deps.backoff);
  }

  get name(): string {
    return this.container.name;
  }

  /** The log of the latest instance, and of the one before it. */
  get logs(): { current: ContainerLog | undefined; previous: ContainerLog | undefined } {
    return { current: this.#current, previous: this.#previous };
  }

  get running(): boolean {
    return this.#state.kind === "running";
  }

  get ready(): boolean {
    return this.#state.kind === "running" && this.#started && (this.#readiness?.ok ?? true);
  }

  /** Terminated and not going to start again. */
  get finished(): boolean {
    return (
      this.#state.kind === "terminated" && (this.#stopping || !this.#restarts(this.#state.exit.exitCode))
    );
  }

  /** The exit code when finished. */
  get exitCode(): number | undefined {
    return this.#state.kind === "terminated" ? this.#state.exit.exitCode : undefined;
  }

  start(): void {
    this.#launch();
  }

  /** Stops for good: SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
  stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    this.#cancelTimer?.();
    this.#stopProbes();
    if (this.#state.kind === "running") this.#terminate(this.#state.process, graceMs);
    else this.#deps.onChange();
    return this.#done;
  }

  status(): ContainerStatus {
    const lastExit = this.#state.kind === "terminated" ? this.#state.exit : this.#last;
    const containerID =
      this.#state.kind === "running" ? `process://${this.#state.process.pid ?? 0}` : lastExit?.containerID;
    return {
      name: this.name,
      image: this.container.image ?? "",
      imageID: "",
      ...(containerID ? { containerID } : {}),
      ready: this.ready,
      started: this.#state.kind === "running" && this.#started,
      restartCount: this.#restartCount,
      state: this.#stateJson(),
      lastState: this.#last ? { terminated: terminatedJson(this.#last) } : {},
    };
  }

  #stateJson(): ContainerState {
    const state = this.#state;
    switch (state.kind) {
      case "waiting":
        return { waiting: { reason: state.reason, ...(state.message ? { message: state.message } : {}) } };
      case "running":
        return { running: { startedAt: formatTime(state.startedAt) } };
      case "terminated":
        return { terminated: terminatedJson(state.exit) };
      default: {
        const never: never = state;
        return never;
      }
    }
  }

  #launch(): void {
    if (this.#stopping) return;
    const prepared = this.#deps.prepare();
    if (prepared.error) {
      this.#state = {
        kind: "waiting",
        reason: "CreateContainerConfigError",
        message: prepared.error.message,
      };
      this.#deps.event("Warning", "Failed", `Error: ${prepared.error.message}`);
      this.#deps.onChange();
      this.#cancelTimer = this.#deps.clock.setTimer(this.#deps.configRetryMs, () => this.#launch());
      return;
    }
    const launch = prepared.value;
    if (this.#instances > 0) {
      this.#restartCount++;
      this.#previous = this.#current;
    }
    const instance = this.#instances++;
    const log = new ContainerLog({
      clock: this.#deps.clock,
      maxLines: this.#deps.maxLogLines,
      ...(this.#deps.logDir ? { file: path.join(this.#deps.logDir, `${instance}.log`) } : {}),
    });
    this.#current = log;
    const startedAt = this.#deps.clock.now();
    const { mapPath: _map, ...spec } = launch;
    const process = this.#deps.launcher({ ...spec, onOutput: (stream, chunk) => log.write(stream, chunk) });
    this.#state = { kind: "running", startedAt, process };
    this.#killedByProbe = false;
    if (process.pid !== undefined) this.#deps.onProcess?.(process.pid, true);
    this.#deps.event("Normal", "Started", `Started container ${this.name}`);
    let finish: () => void = () => {};
    this.#done = new Promise((resolve) => (finish = resolve));
    void process.exited.then((exit) => {
      this.#onExit(process, startedAt, exit, log);
      finish();
    });
    this.#startProbes(launch);
    this.#deps.onChange();
  }

  #startProbes(launch: ContainerLaunch): void {
    const { startupProbe, livenessProbe, readinessProbe } = this.container;
    this.#started = startupProbe === undefined;
    const after = () => {
      if (livenessProbe) this.#probes.push(this.#loop("liveness", livenessProbe, launch));
      if (readinessProbe) {
        this.#readiness = this.#loop("readiness", readinessProbe, launch);
        this.#probes.push(this.#readiness);
      }
    };
    if (!startupProbe) {
      after();
      return;
    }
    const startup = this.#loop("startup", startupProbe, launch, () => {
      startup.stop();
      this.#probes = this.#probes.filter((p) => p !== startup);
      this.#started = true;
      after();
    });
    this.#probes.push(startup);
  }

  #loop(kind: ProbeKind, probe: Probe, launch: ContainerLaunch, onPass?: () => void): ProbeLoop {
    const target = {
      podIP: this.#deps.podIP,
      ports: this.container.ports ?? [],
      env: launch.env,
      cwd: launch.cwd,
      ...(launch.mapPath ? { mapPath: launch.mapPath } : {}),
    };
    const label = kind[0]?.toUpperCase() + kind.slice(1);
    const loop = new ProbeLoop({
      kind,
      probe,
      clock: this.#deps.clock,
      check: () => this.#deps.checker(probe, target),
      onFailure: (outcome) =>
        this.#deps.event("Warning", "Unhealthy", `${label} probe failed: ${outcome.message}`),
      onChange: (ok, outcome) => {
        if (ok) onPass?.();
        if (!ok && kind !== "readiness") this.#probeKill(kind, probe, outcome);
        this.#deps.onChange();
      },
    });
    loop.start();
    return loop;
  }

  #probeKill(kind: ProbeKind, probe: Probe, outcome: ProbeOutcome): void {
    if (this.#state.kind !== "running" || this.#stopping) return;
    void outcome;
    this.#killedByProbe = true;
    const restart = this.#deps.restartPolicy === "Never" ? "" : ", will be restarted";
    this.#deps.event("Normal", "Killing", `Container ${this.name} failed ${kind} probe${restart}`);
    const grace = probe.terminationGracePeriodSeconds ?? this.#deps.graceSeconds;
    this.#stopProbes();
    this.#terminate(this.#state.process, grace * 1000);
  }

  #terminate(process: HostProcess, graceMs: number): void {
    if (graceMs <= 0) {
      process.kill("SIGKILL");
      return;
    }
    process.kill("SIGTERM");
    const cancel = this.#deps.clock.setTimer(graceMs, () => process.kill("SIGKILL"));
    void process.exited.then(cancel);
  }

  #stopProbes(): void {
    for (const probe of this.#probes) probe.stop();
    this.#probes = [];
    this.#readiness = undefined;
  }

  #restarts(exitCode: number): boolean {
    if (this.#deps.restartPolicy === "Never") return false;
    if (this.#killedByProbe) return true;
    if (this.#deps.init) return exitCode !== 0;
    return this.#deps.restartPolicy === "Always" || exitCode !== 0;
  }

  #onExit(process: HostProcess, startedAt: number, exit: ProcessExit, log: ContainerLog): void {
    this.#stopProbes();
    log.close();
    if (process.pid !== undefined) this.#deps.onProcess?.(process.pid, false);
    const finishedAt = this.#deps.clock.now();
    const terminated: TerminatedState = {
      exitCode: exit.exitCode,
      reason: exit.error ? "StartError" : exit.exitCode === 0 ? "Completed" : "Error",
      ...(exit.error ? { message: exit.error } : {}),
      ...(exit.signal && SIGNAL_NUMBERS[exit.signal] ? { signal: SIGNAL_NUMBERS[exit.signal] } : {}),
      startedAt,
      finishedAt,
      ...(process.pid !== undefined ? { containerID: `process://${process.pid}` } : {}),
    };
    this.#state = { kind: "terminated", exit: terminated };
    this.#started = false;
    if (this.#stopping || !this.#restarts(exit.exitCode)) {
      this.#deps.onChange();
      return;
    }
    const delay = this.#backoff.next(finishedAt - startedAt);
    this.#last = terminated;
    if (delay > 0) {
      const message = `back-off ${formatDelay(delay)} restarting failed container=${this.name}`;
      this.#state = { kind: "waiting", reason: "CrashLoopBackOff", message };
      this.#deps.event("Warning", "BackOff", `Back-off restarting failed container ${this.name}`);
    }
    this.#deps.onChange();
    this.#cancelTimer = this.#deps.clock.setTimer(delay, () => this.#launch());
  }
}

function terminatedJson(exit: TerminatedState) {
  return {
    exitCode: exit.exitCode,
    reason: exit.reason,
    ...(exit.message ? { message: exit.message } : {}),
    ...(exit.signal ? { signal: exit.signal } : {}),
    startedAt: formatTime(exit.startedAt),
    finishedAt: formatTime(exit.finishedAt),
    ...(exit.containerID ? { containerID: exit.containerID } : {}),
  };
}

function formatDelay(ms: number): string {
  const seconds = ms / 1000;
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m${seconds % 60}s` : `${seconds}s`;
}

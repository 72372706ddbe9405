// Runs one probe of one container on the injected clock: first after initialDelaySeconds, then
// every periodSeconds. The result flips after successThreshold consecutive passes or
// failureThreshold consecutive failures. Readiness starts failed, liveness passed, startup unknown
// (failed), as on Kubernetes.
import type { Clock } from "../../../services/kernel/clock.ts";
import type { Probe } from "../objects/pod-types.ts";
import type { ProbeOutcome } from "./probe-check.ts";

export type ProbeKind = "startup" | "readiness" | "liveness";

export interface ProbeLoopOptions {
  kind: ProbeKind;
  probe: Probe;
  clock: Clock;
  check: () => Promise<ProbeOutcome>;
  /** Called when the result flips. */
  onChange: (ok: boolean, outcome: ProbeOutcome) => void;
  /** Called after every failed attempt (the kubelet records an Unhealthy event). */
  onFailure?: (outcome: ProbeOutcome) => void;
}

export class ProbeLoop {
  readonly #options: ProbeLoopOptions;
  #ok: boolean;
  #successes = 0;
  #failures = 0;
  #cancel: (() => void) | undefined;
  #stopped = false;

  constructor(options: ProbeLoopOptions) {
    this.#options = options;
    this.#ok = options.kind === "liveness";
  }

  get ok(): boolean {
    return this.#ok;
  }

  start(): void {
    this.#schedule((this.#options.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel?.();
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#cancel = this.#options.clock.setTimer(ms, () => void this.#run());
  }

  async #run(): Promise<void> {
    const outcome = await this.#options.check();
    if (this.#stopped) return;
    const probe = this.#options.probe;
    const successThreshold = this.#options.kind === "readiness" ? (probe.successThreshold ?? 1) : 1;
    const failureThreshold = probe.failureThreshold ?? 3;
    if (outcome.ok) {
      this.#successes++;
      this.#failures = 0;
      if (!this.#ok && this.#successes >= successThreshold) this.#flip(true, outcome);
    } else {
      this.#failures++;
      this.#successes = 0;
      this.#options.onFailure?.(outcome);
      if (this.#ok && this.#failures >= failureThreshold) this.#flip(false, outcome);
      else if (!this.#ok && this.#options.kind === "startup" && this.#failures >= failureThreshold)
        this.#flip(false, outcome);
    }
    this.#schedule((probe.periodSeconds ?? 10) * 1000);
  }

  #flip(ok: boolean, outcome: ProbeOutcome): void {
    this.#ok = ok;
    this.#options.onChange(ok, outcome);
  }
}

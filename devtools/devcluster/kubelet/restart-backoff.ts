// Crash-loop back-off of one container: the first restart is immediate, the next waits
// initialMs, then twice as long each time up to maxMs (the shared Backoff). A container that ran
// for resetAfterMs before it ended starts over.
import { Backoff } from "../../../services/kernel/backoff.ts";

export interface BackoffSettings {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
}

export class RestartBackoff {
  readonly #resetAfterMs: number;
  readonly #backoff: Backoff;
  #restarts = 0;

  constructor(settings: BackoffSettings) {
    this.#resetAfterMs = settings.resetAfterMs;
    this.#backoff = new Backoff(settings);
  }

  /** How long to wait before the next start of a container that ran for ranForMs. */
  next(ranForMs: number): number {
    if (ranForMs >= this.#resetAfterMs) {
      this.#restarts = 0;
      this.#backoff.reset();
    }
    return this.#restarts++ === 0 ? 0 : this.#backoff.next();
  }
}

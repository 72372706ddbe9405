// Crash-loop back-off of one container: the first restart is immediate, the next waits
// initialMs, then twice as long each time up to maxMs. A container that ran for resetAfterMs
// before it ended starts over.
export interface BackoffSettings {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
}

export class RestartBackoff {
  readonly #settings: BackoffSettings;
  #failures = 0;

  constructor(settings: BackoffSettings) {
    this.#settings = settings;
  }

  /** How long to wait before the next start of a container that ran for ranForMs. */
  next(ranForMs: number): number {
    if (ranForMs >= this.#settings.resetAfterMs) this.#failures = 0;
    const failures = this.#failures++;
    if (failures === 0) return 0;
    return Math.min(this.#settings.initialMs * 2 ** (failures - 1), this.#settings.maxMs);
  }
}

// Exponential backoff: initial, doubling, capped; reset after a success. One computation for every
// retry in the repository: informers and leader election, the work queue's per-key retries, the
// router's health-watch reconnects, model-info retries and outlier ejections, and the dev cluster's
// crash-loop back-off of a container (restart-backoff.ts).

export interface BackoffConfig {
  initialMs: number;
  maxMs: number;
}

/** Informers and leader election: 1 s doubling to 30 s. */
export const WATCH_BACKOFF: BackoffConfig = { initialMs: 1_000, maxMs: 30_000 };

export class Backoff {
  readonly #config: BackoffConfig;
  #failures = 0;

  constructor(config: BackoffConfig) {
    this.#config = config;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const delay = Math.min(this.#config.maxMs, this.#config.initialMs * 2 ** this.#failures);
    this.#failures = Math.min(this.#failures + 1, 32);
    return delay;
  }

  reset(): void {
    this.#failures = 0;
  }

  get failures(): number {
    return this.#failures;
  }
}

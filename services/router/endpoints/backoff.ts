// Exponential backoff: base, 2x base, 4x base... capped at max. Used for health-watch reconnects,
// model-info retries and outlier ejection times.

export interface BackoffConfig {
  baseMs: number;
  maxMs: number;
}

export class Backoff {
  readonly #config: BackoffConfig;
  #attempts = 0;

  constructor(config: BackoffConfig) {
    this.#config = config;
  }

  /** How many delays were handed out since the last reset. */
  get attempts(): number {
    return this.#attempts;
  }

  /** The next delay: base * 2^attempts, capped at max. */
  next(): number {
    const ms = Math.min(this.#config.maxMs, this.#config.baseMs * 2 ** Math.min(this.#attempts, 30));
    this.#attempts++;
    return ms;
  }

  reset(): void {
    this.#attempts = 0;
  }
}

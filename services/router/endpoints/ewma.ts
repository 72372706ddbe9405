// An exponentially weighted moving average whose weight decays with time, not with the number of
// samples: a sample `halfLifeMs` old counts half as much as a new one. So an endpoint that served
// nothing for a while is judged on old figures less and less confidently, however busy the others are.
import type { Clock } from "../../kernel/clock.ts";

export class Ewma {
  readonly #halfLifeMs: number;
  readonly #clock: Clock;
  #value: number | undefined;
  #at = 0;

  constructor(halfLifeMs: number, clock: Clock) {
    this.#halfLifeMs = halfLifeMs;
    this.#clock = clock;
  }

  /** The average so far; undefined before the first sample. */
  get value(): number | undefined {
    return this.#value;
  }

  record(sample: number): void {
    const now = this.#clock.now();
    if (this.#value === undefined) {
      this.#value = sample;
    } else {
      const keep = 0.5 ** (Math.max(0, now - this.#at) / this.#halfLifeMs);
      // A burst of samples at the same instant still moves the average: each new one weighs at least 10%.
      const weight = Math.max(0.1, 1 - keep);
      this.#value = this.#value * (1 - weight) + sample * weight;
    }
    this.#at = now;
  }
}

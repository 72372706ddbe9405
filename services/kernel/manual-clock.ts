// A clock that only moves when the test says so. `advance` runs due timers in time order, letting
// promise callbacks settle between them, so code that sleeps in a loop makes progress.
import type { Clock } from "./clock.ts";

export class ManualClock implements Clock {
  #now: number;
  #timers: { at: number; fn: () => void; cancelled: boolean }[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, ms), fn, cancelled: false };
    this.#timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Timers waiting (not cancelled). */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      await settle();
      const next = this.#timers.filter((t) => !t.cancelled && t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = until;
    await settle();
  }
}

/** Lets pending promise callbacks and I/O callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

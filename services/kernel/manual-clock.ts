// A clock that only moves when the test says so, for every spec that depends on time (operator,
// router, dev cluster). `advance` runs due timers in time order (timers that those set, when due in
// the same advance, too), each seeing now() at its due time, and lets promise callbacks settle
// before each and at the end, so code that sleeps in a loop makes progress.
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

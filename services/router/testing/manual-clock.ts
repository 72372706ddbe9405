// A clock for tests: time moves only when the test calls advance(), which runs the timers due.
import type { Clock, Timer } from "../clock.ts";

interface Pending {
  at: number;
  fn: () => void;
  cancelled: boolean;
}

export class ManualClock implements Clock {
  #now: number;
  #timers: Pending[] = [];

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const pending: Pending = { at: this.#now + ms, fn, cancelled: false };
    this.#timers.push(pending);
    return { cancel: () => (pending.cancelled = true) };
  }

  /** Moves time forward by `ms`, running each timer due in order of its time. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#now = due.at;
      due.cancelled = true;
      due.fn();
    }
    this.#timers = this.#timers.filter((t) => !t.cancelled);
    this.#now = end;
  }

  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }
}

// Time is injected so tests control it; production uses the wall clock.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs fn after ms; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** A clock that only moves when the test says so. */
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
    const timer = { at: this.#now + ms, fn, cancelled: false };
    this.#timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  advance(ms: number): void {
    this.#now += ms;
    const due = this.#timers.filter((t) => t.at <= this.#now && !t.cancelled);
    this.#timers = this.#timers.filter((t) => t.at > this.#now && !t.cancelled);
    for (const t of due.sort((a, b) => a.at - b.at)) t.fn();
  }
}

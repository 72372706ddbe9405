// Time as the router sees it: injected everywhere a decision depends on time (ejection backoff, token
// buckets, cache TTL, EWMA), so tests advance a ManualClock instead of sleeping.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds, unless cancelled. Timers never keep the process alive. */
  setTimer(fn: () => void, ms: number): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

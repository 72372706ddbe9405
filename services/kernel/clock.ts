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
    return () => clearTimeout(timer);
  },
};

/** Resolves after ms on the clock, or at once when the signal aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const cancel = clock.setTimer(ms, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** RFC 3339 with seconds (metav1.Time). */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** RFC 3339 with microseconds (metav1.MicroTime, used by Leases). */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

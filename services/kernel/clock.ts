// Time is injected so tests control it (manual-clock.ts); production uses the wall clock. The one
// Clock of the operator, the router and the dev cluster.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Runs fn once after ms; returns a function that cancels it. The timer does not keep the process
   * alive unless keepAlive is set (see systemClock).
   */
  setTimer(ms: number, fn: () => void, options?: { keepAlive?: boolean }): () => void;
}

// Timers are unref'd by default: an armed retry, requeue, bookmark tick, probe or expiry is never
// what keeps a process alive. Each process lives while it serves (the operator's metrics and health
// servers, the router's listeners, the dev cluster's API server, child processes, open watches) and
// stops by closing those; a ref'd timer would hold a stopping process open until it fired. The
// router and the dev cluster always unref'd their timers; of the operator's, only the work queue's
// delayed requeues change, and those are cancelled at shutdown anyway. sleep() is the exception: a
// caller awaits it, mid-operation (an informer's relist back-off while the router starts, before it
// listens), so it keeps the process alive as it always did; otherwise that wait would end the process.
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn, options) {
    const timer = setTimeout(fn, ms);
    if (!options?.keepAlive) timer.unref();
    return () => clearTimeout(timer);
  },
};

/** Resolves after ms on the clock, or at once when the signal aborts. Keeps the process alive meanwhile. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const cancel = clock.setTimer(ms, done, { keepAlive: true });
    signal?.addEventListener("abort", done, { once: true });
  });
}

// Warnings that would repeat once per request while a dependency is down (a Redis that stopped
// answering makes every request fall back) are logged at most once per interval per kind: the first
// at once, later ones folded into the next line written, which says how many were left out
// (`suppressed`) since the previous one. A kind that stops recurring leaves its count unwritten; the
// metrics beside each warning count every occurrence.
import type { Logger } from "./log.ts";

export class RateLimitedLog {
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #kinds = new Map<string, { lastAt: number; suppressed: number }>();

  constructor(log: Logger, intervalMs = 10_000, now: () => number = Date.now) {
    this.#log = log;
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /** Logs `msg` at warn level unless a line of the same `kind` was written within the interval. */
  warn(kind: string, fields: Record<string, unknown>, msg: string): void {
    const now = this.#now();
    const state = this.#kinds.get(kind);
    if (state !== undefined && now - state.lastAt < this.#intervalMs) {
      state.suppressed++;
      return;
    }
    const suppressed = state?.suppressed ?? 0;
    this.#kinds.set(kind, { lastAt: now, suppressed: 0 });
    this.#log.warn(suppressed > 0 ? { ...fields, suppressed } : fields, msg);
  }
}

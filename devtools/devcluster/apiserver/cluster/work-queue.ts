// A deduplicating queue of keys processed off the current call stack, so controllers react to
// store events without re-entering the store while it notifies. `idle()` lets tests wait.
export type Scheduler = (fn: () => void) => void;

export const immediateScheduler: Scheduler = (fn) => {
  setImmediate(fn);
};

export class WorkQueue<K> {
  readonly #pending = new Map<string, K>();
  readonly #process: (item: K) => void;
  readonly #schedule: Scheduler;
  readonly #onError: (err: unknown, item: K) => void;
  #scheduled = false;
  #waiters: (() => void)[] = [];

  constructor(
    process: (item: K) => void,
    options: { schedule?: Scheduler; onError?: (err: unknown, item: K) => void } = {},
  ) {
    this.#process = process;
    this.#schedule = options.schedule ?? immediateScheduler;
    this.#onError = options.onError ?? (() => {});
  }

  add(key: string, item: K): void {
    this.#pending.set(key, item);
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#schedule(() => this.#drain());
  }

  /** Whether work is queued or about to run. */
  get busy(): boolean {
    return this.#pending.size > 0 || this.#scheduled;
  }

  /** Resolves once every queued item (and anything they queued) has been processed. */
  idle(): Promise<void> {
    if (this.#pending.size === 0 && !this.#scheduled) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #drain(): void {
    this.#scheduled = false;
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    for (const item of batch) {
      try {
        this.#process(item);
      } catch (err) {
        this.#onError(err, item);
      }
    }
    if (this.#pending.size === 0 && !this.#scheduled) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}

// A single-consumer queue of events that a producer pushes and an async iterator drains. Breaking
// out of the iteration (or the consumer going away) calls `onCancel`.

export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: (() => void) | undefined;
  private done = false;
  private error: unknown;
  private readonly onCancel: () => void;

  constructor(onCancel: () => void) {
    this.onCancel = onCancel;
  }

  push(item: T): void {
    if (this.done) return;
    this.items.push(item);
    this.wake();
  }

  /** No more items will come; the iteration ends after the queued ones. */
  end(): void {
    this.done = true;
    this.wake();
  }

  /** Ends the iteration with an error after the queued items. */
  fail(error: unknown): void {
    if (this.done) return;
    this.error = error;
    this.end();
  }

  get ended(): boolean {
    return this.done;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    let finished = false;
    try {
      for (;;) {
        const item = this.items.shift();
        if (item !== undefined) {
          yield item;
          continue;
        }
        if (this.done) {
          finished = true;
          if (this.error !== undefined) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => {
          this.waiter = resolve;
        });
      }
    } finally {
      if (!finished) this.onCancel();
    }
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

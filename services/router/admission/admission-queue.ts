// Admission per model: at most `capacity()` requests run upstream at once; the next `maxQueue` wait
// in priority order (lower first: interactive requests before batch lines), then arrival order; any more are refused at once with RESOURCE_EXHAUSTED and a retry hint, so an
// overloaded router sheds load instead of growing an unbounded backlog. A waiting request leaves the
// queue when its caller cancels or its deadline passes.
import { Code, TesseraError } from "../../kernel/errors.ts";
import { tesseraTracer } from "../../kernel/telemetry/tracing.ts";

export interface AdmissionOptions {
  /** Requests that may run at once (read at each decision: it follows the healthy endpoints). */
  capacity: () => number;
  maxQueue: number;
  retryAfterMs: number;
}

interface Waiter {
  priority: number;
  admit: () => void;
}

export class AdmissionQueue {
  readonly #options: AdmissionOptions;
  readonly #waiting: Waiter[] = [];
  #running = 0;

  constructor(options: AdmissionOptions) {
    this.#options = options;
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves with a release function once admitted; rejects when full or when `signal` aborts. A
   * request that has to wait gets a "queue" span in its trace.
   */
  async acquire(signal: AbortSignal, priority = 0): Promise<() => void> {
    if (this.#running < this.#options.capacity() && this.#waiting.length === 0) return this.#admit();
    const span = tesseraTracer().startSpan("queue", {
      attributes: { "tessera.queued": this.#waiting.length },
    });
    try {
      return await this.#wait(signal, priority);
    } finally {
      span.end();
    }
  }

  async #wait(signal: AbortSignal, priority: number): Promise<() => void> {
    if (this.#waiting.length >= this.#options.maxQueue) {
      const { retryAfterMs } = this.#options;
      throw new TesseraError(
        Code.RESOURCE_EXHAUSTED,
        `the router is at capacity (${this.#running} running, ${this.#waiting.length} queued); retry in ${retryAfterMs} ms`,
        { retryAfterMs },
      );
    }
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        priority,
        admit: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(waiter);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      // After every waiter of the same or a lower priority value.
      const at = this.#waiting.findIndex((w) => w.priority > priority);
      if (at < 0) this.#waiting.push(waiter);
      else this.#waiting.splice(at, 0, waiter);
    });
    return this.#release();
  }

  #admit(): () => void {
    this.#running++;
    return this.#release();
  }

  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#wake();
    };
  }

  /** Admits waiters while there is room (also call it when capacity grows). */
  wake(): void {
    this.#wake();
  }

  #wake(): void {
    while (this.#waiting.length > 0 && this.#running < this.#options.capacity()) {
      this.#running++;
      this.#waiting.shift()!.admit();
    }
  }
}

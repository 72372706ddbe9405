// One upstream generation and everyone reading it. The producer runs once, as fast as the worker
// streams; its events are kept, so a reader that joins late (an identical request coalesced onto this
// one) replays them from the start and then follows live. When the last reader leaves before the end,
// the upstream call is cancelled, so the worker frees the request's resources.
import { Code, TesseraError } from "../../common/errors.ts";
import type { RouterEvent } from "./router-events.ts";

export type Producer = (signal: AbortSignal, flight: Flight) => AsyncIterable<RouterEvent>;

export class Flight {
  readonly events: RouterEvent[] = [];
  /** The endpoint that is producing the events (set by the producer). */
  endpoint = "";
  readonly #controller = new AbortController();
  readonly #settled: Promise<void>;
  #error: TesseraError | undefined;
  #done = false;
  #readers = 0;
  #wakers: (() => void)[] = [];

  constructor(produce: Producer) {
    this.#settled = this.#pump(produce);
  }

  get done(): boolean {
    return this.#done;
  }

  get error(): TesseraError | undefined {
    return this.#error;
  }

  /** Resolves once the producer has finished (successfully or not). */
  get settled(): Promise<void> {
    return this.#settled;
  }

  /** Counts a reader in; every join must be matched by leave() (read() leaves when it ends). */
  join(): void {
    this.#readers++;
  }

  leave(): void {
    this.#readers--;
    if (this.#readers === 0 && !this.#done)
      this.#controller.abort(new TesseraError(Code.CANCELLED, "every reader of the generation left"));
  }

  /** Resolves when the first event is there; rejects with the failure if it ended without one. */
  async first(signal: AbortSignal): Promise<void> {
    while (this.events.length === 0) {
      if (this.#done)
        throw this.#error ?? new TesseraError(Code.INTERNAL, "the generation ended with no event");
      await this.#next(signal);
    }
  }

  /** Every event from the start, then live ones; throws the failure, or CANCELLED when `signal` aborts. */
  async *read(signal: AbortSignal): AsyncGenerator<RouterEvent> {
    try {
      for (let i = 0; ; ) {
        if (i < this.events.length) {
          yield this.events[i++]!;
          continue;
        }
        if (this.#done) {
          if (this.#error) throw this.#error;
          return;
        }
        await this.#next(signal);
      }
    } finally {
      this.leave();
    }
  }

  #next(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#wakers.push(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  #wake(): void {
    const wakers = this.#wakers;
    this.#wakers = [];
    for (const wake of wakers) wake();
  }

  async #pump(produce: Producer): Promise<void> {
    try {
      for await (const event of produce(this.#controller.signal, this)) {
        this.events.push(event);
        this.#wake();
      }
    } catch (err) {
      this.#error = TesseraError.from(err);
    } finally {
      this.#done = true;
      this.#wake();
    }
  }
}

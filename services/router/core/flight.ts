// One upstream generation and everyone reading it. The producer pushes events as the worker streams
// them; with `keep` they are kept, so a reader that joins late (an identical request coalesced onto
// this one) gets them all from the start and then follows live, and the finished flight can go into
// the response cache. Without it (a request neither cached nor coalesced has one reader) an event is
// held only until that reader has it: a long generation does not pile up its tokens in the router,
// whose young garbage collections otherwise copy and promote them. Delivery is synchronous and
// push-based (no promise per event): this is the router's hot path, run once per token per request.
// When the last reader leaves before the end, the producer's signal aborts, so the worker frees the
// request.
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { RouterEvent } from "./router-events.ts";
import type { ServingPath } from "./serving-path.ts";

export interface FlightReader {
  event(event: RouterEvent): void;
  /** The generation ended: successfully when `error` is undefined. */
  end(error: TesseraError | undefined): void;
}

/** Runs the generation: pushes its events into the flight, resolves at the end, rejects on failure. */
export type Producer = (flight: Flight, signal: AbortSignal) => Promise<void>;

export class Flight {
  /** With `keep`, every event so far; without, those no reader has had yet. */
  readonly events: RouterEvent[] = [];
  /** The endpoint producing the events (set by the producer before its first push). */
  endpoint = "";
  /** How the producer served it, and on which endpoints (kept up to date as it goes). */
  readonly served: ServingPath = { path: "colocated", endpoints: [], workerMs: 0 };
  readonly settled: Promise<void>;
  readonly #controller = new AbortController();
  /** An array, not a Set: push() walks it once per token, and a Set's iterator is an object each time. */
  #readers: FlightReader[] = [];
  #error: TesseraError | undefined;
  #done = false;
  #joined = 0;
  #waiters: (() => void)[] = [];
  readonly #keep: boolean;
  #pushed = 0;

  constructor(produce: Producer, options: { keep?: boolean } = {}) {
    this.#keep = options.keep ?? true;
    this.settled = produce(this, this.#controller.signal).then(
      () => this.#finish(undefined),
      (err: unknown) => this.#finish(TesseraError.from(err)),
    );
  }

  get done(): boolean {
    return this.#done;
  }

  get error(): TesseraError | undefined {
    return this.#error;
  }

  /** An event has been pushed. */
  get started(): boolean {
    return this.#pushed > 0;
  }

  /** Producer side: one more event for every reader. */
  push(event: RouterEvent): void {
    const readers = this.#readers;
    if (this.#keep || readers.length === 0) this.events.push(event);
    for (let i = 0; i < readers.length; i++) readers[i]!.event(event);
    if (++this.#pushed === 1) this.#wake();
  }

  /** Counts a reader in before it reads; every join must be matched by leave(). */
  join(): void {
    this.#joined++;
  }

  leave(): void {
    this.#joined--;
    if (this.#joined === 0 && !this.#done)
      this.#controller.abort(new TesseraError(Code.CANCELLED, "every reader of the generation left"));
  }

  /** Resolves when the first event is there; rejects with the failure if it ended without one. */
  async first(signal: AbortSignal): Promise<void> {
    while (this.#pushed === 0) {
      if (this.#done)
        throw this.#error ?? new TesseraError(Code.INTERNAL, "the generation ended with no event");
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        this.#waiters.push(() => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        });
      });
    }
  }

  /**
   * Hands every event so far to `onEvent`, then each new one as it comes; resolves at the end,
   * rejects with the failure, or with the signal's reason when it aborts (the reader then leaves).
   */
  read(onEvent: (event: RouterEvent) => void, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const stop = (error: unknown) => {
        this.#readers = this.#readers.filter((r) => r !== reader);
        signal.removeEventListener("abort", onAbort);
        this.leave();
        if (error === undefined) resolve();
        else reject(error);
      };
      const reader: FlightReader = { event: onEvent, end: stop };
      const onAbort = () => stop(signal.reason);
      try {
        for (const event of this.events) onEvent(event);
      } catch (err) {
        return stop(err);
      } finally {
        if (!this.#keep) this.events.length = 0;
      }
      if (this.#done) return stop(this.#error);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      // A literal for the first: push() onto an empty array makes room for 17 (kept while it runs).
      this.#readers = this.#readers.length === 0 ? [reader] : [...this.#readers, reader];
    });
  }

  #finish(error: TesseraError | undefined): void {
    this.#done = true;
    this.#error = error;
    this.#wake();
    for (const reader of [...this.#readers]) reader.end(error);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

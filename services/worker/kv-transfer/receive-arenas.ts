// Memory the block store reads GET replies into, reused from one batch to the next. A fresh buffer
// per batch costs a page fault per 4 KiB the first time it is written (about 2 us each in this VM:
// 9,000 faults, 15-25 ms of CPU, for 36 MiB of 384 KiB blocks, twice the rest of a GET's work).
// An arena is taken for one batch and given back once its blocks were verified and handed over; a
// batch that never completes (deadline, failure) keeps its arena, since late replies may still be
// written into it, and the garbage collector takes it. Concurrent operations take arenas of their own.

export class ReceiveArenas {
  readonly #free: Buffer[] = [];
  readonly #keep: number;

  /** `keep` arenas at most are kept for reuse; `prefault` of `bytes` are allocated and touched now. */
  constructor(options: { keep: number; prefault?: { count: number; bytes: number } }) {
    this.#keep = options.keep;
    const { count = 0, bytes = 0 } = options.prefault ?? {};
    for (let i = 0; i < Math.min(count, this.#keep); i++)
      this.#free.push(Buffer.allocUnsafeSlow(bytes).fill(0));
  }

  /** An arena of at least `bytes`: a kept one when one is large enough, else a new one. */
  take(bytes: number): Buffer {
    const i = this.#free.findIndex((arena) => arena.length >= bytes);
    if (i >= 0) return this.#free.splice(i, 1)[0]!;
    return Buffer.allocUnsafeSlow(bytes);
  }

  /** Gives an arena back: nothing may read or write it afterwards. */
  give(arena: Buffer): void {
    if (this.#free.length < this.#keep) this.#free.push(arena);
  }
}

// A token bucket: holds up to `burst` tokens, refilled at `perSecond`. take(n) succeeds when n tokens
// are there, or says how long until they will be. A cost larger than the burst passes when the bucket
// is full (and leaves it in debt), so one large request is slowed, never refused forever.
import type { Clock } from "../../kernel/clock.ts";

export interface BucketLimit {
  perSecond: number;
  burst: number;
}

export type Take = { ok: true } | { ok: false; retryAfterMs: number };

export class TokenBucket {
  readonly #limit: BucketLimit;
  readonly #clock: Clock;
  #tokens: number;
  #at: number;

  constructor(limit: BucketLimit, clock: Clock) {
    this.#limit = limit;
    this.#clock = clock;
    this.#tokens = limit.burst;
    this.#at = clock.now();
  }

  get available(): number {
    this.#refill();
    return this.#tokens;
  }

  take(cost: number): Take {
    this.#refill();
    const needed = Math.min(cost, this.#limit.burst);
    if (this.#tokens >= needed) {
      this.#tokens -= cost;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil(((needed - this.#tokens) / this.#limit.perSecond) * 1_000) };
  }

  /** Gives back tokens taken but not used (e.g. max_tokens not generated), up to the burst. */
  refund(tokens: number): void {
    this.#refill();
    this.#tokens = Math.min(this.#limit.burst, this.#tokens + tokens);
  }

  #refill(): void {
    const now = this.#clock.now();
    this.#tokens = Math.min(
      this.#limit.burst,
      this.#tokens + ((now - this.#at) / 1_000) * this.#limit.perSecond,
    );
    this.#at = now;
  }
}

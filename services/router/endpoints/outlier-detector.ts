// Passive outlier ejection (as Envoy does it): `consecutiveFailures` failed requests in a row eject an
// endpoint for a time that doubles with each ejection (base, 2x, 4x... up to max). When the time is up
// the endpoint is probed (a health check); it returns on probation if the probe passes, and is
// ejected again for longer if not. On probation one failure ejects it again at once; its first
// success ends the probation and resets the ejection time to the base.

import { Backoff } from "../../kernel/backoff.ts";
import type { Clock } from "../../kernel/clock.ts";

export interface OutlierConfig {
  /** Failed requests in a row that eject an endpoint. */
  consecutiveFailures: number;
  baseEjectionMs: number;
  maxEjectionMs: number;
}

export type OutlierState = "active" | "ejected" | "probing";

export interface OutlierEvents {
  /** Checks whether an ejected endpoint may come back (e.g. grpc.health.v1 Check). */
  probe(): Promise<boolean>;
  ejected(ms: number): void;
  readmitted(): void;
}

export class OutlierDetector {
  readonly #config: OutlierConfig;
  readonly #clock: Clock;
  readonly #events: OutlierEvents;
  readonly #backoff: Backoff;
  #state: OutlierState = "active";
  #failures = 0;
  #probation = false;
  #cancelTimer: (() => void) | undefined;
  #closed = false;

  constructor(config: OutlierConfig, clock: Clock, events: OutlierEvents) {
    this.#config = config;
    this.#clock = clock;
    this.#events = events;
    this.#backoff = new Backoff({ initialMs: config.baseEjectionMs, maxMs: config.maxEjectionMs });
  }

  get state(): OutlierState {
    return this.#state;
  }

  get ejected(): boolean {
    return this.#state !== "active";
  }

  recordSuccess(): void {
    this.#failures = 0;
    if (this.#probation) {
      this.#probation = false;
      this.#backoff.reset();
    }
  }

  recordFailure(): void {
    if (this.#state !== "active") return;
    this.#failures++;
    if (this.#probation || this.#failures >= this.#config.consecutiveFailures) this.#eject();
  }

  close(): void {
    this.#closed = true;
    this.#cancelTimer?.();
  }

  #eject(): void {
    const ms = this.#backoff.next();
    this.#state = "ejected";
    this.#failures = 0;
    this.#events.ejected(ms);
    this.#cancelTimer = this.#clock.setTimer(ms, () => void this.#probe());
  }

  async #probe(): Promise<void> {
    this.#state = "probing";
    const ok = await this.#events.probe().catch(() => false);
    if (this.#closed) return;
    if (!ok) return this.#eject();
    this.#state = "active";
    this.#probation = true;
    this.#events.readmitted();
  }
}

// One ioredis connection with a health state and per-operation deadlines. Commands are never queued
// while Redis is away (no offline queue, no retry of a command): an operation fails at once with
// UNAVAILABLE and the caller recomputes, while ioredis reconnects in the background with backoff.
// An operation that outlives its deadline rejects with DEADLINE_EXCEEDED; until its late reply comes,
// Redis counts as hung (NOT_SERVING) so that later operations fail fast instead of waiting as well.
import { Redis, type RedisOptions } from "ioredis";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { isAuthError, redisError } from "./redis-errors.ts";
import { describeAddress } from "./redis-kv-config.ts";

export type KvStoreHealth = { status: "SERVING" } | { status: "NOT_SERVING"; reason: string };

/** Calls `fn` after `ms`; returns a function that cancels it. */
export type SetTimer = (fn: () => void, ms: number) => () => void;

export const realTimer: SetTimer = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};

export interface RedisConnectionDeps {
  logger?: Logger;
  setTimer?: SetTimer;
}

export class RedisConnection {
  readonly redis: Redis;
  readonly address: string;
  readonly #opTimeoutMs: number;
  readonly #setTimer: SetTimer;
  readonly #logger: Logger | undefined;
  readonly #listeners = new Set<(health: KvStoreHealth) => void>();
  #health: KvStoreHealth = { status: "NOT_SERVING", reason: "not connected yet" };
  #lastError: string | undefined;
  #ready = false;
  #stalled = 0;

  constructor(options: RedisOptions, opTimeoutMs: number, deps: RedisConnectionDeps = {}) {
    this.address = describeAddress(options);
    this.#opTimeoutMs = opTimeoutMs;
    this.#setTimer = deps.setTimer ?? realTimer;
    this.#logger = deps.logger;
    const redisOptions: Omit<RedisOptions, "replyMapping"> = {
      ...options,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
    };
    this.redis = new Redis(redisOptions);
    this.redis.on("ready", () => {
      this.#ready = true;
      this.#lastError = undefined;
      this.#update();
    });
    this.redis.on("error", (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      this.#lastError = isAuthError(err)
        ? `authentication to ${this.address} failed: ${message}`
        : `${this.address}: ${message}`;
      this.#update();
    });
    this.redis.on("close", () => {
      this.#ready = false;
      this.#update();
    });
    this.redis.on("end", () => {
      this.#ready = false;
      this.#lastError = "connection closed";
      this.#update();
    });
  }

  get health(): KvStoreHealth {
    return this.#health;
  }

  /** Calls `listener` on every change of health; returns a function that unsubscribes. */
  onHealth(listener: (health: KvStoreHealth) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Connects; resolves with the health once Redis answered or the first attempt failed (never rejects). */
  start(): Promise<KvStoreHealth> {
    const settled = new Promise<KvStoreHealth>((resolve) => {
      const stop = this.onHealth((health) => {
        stop();
        resolve(health);
      });
    });
    this.redis.connect().catch(() => {});
    return settled;
  }

  /**
   * Runs one operation under the deadline; rejects with a TesseraError (UNAVAILABLE, DEADLINE_EXCEEDED,
   * …). `signal` aborts at the deadline: an operation of several round trips stops sending.
   */
  run<T>(op: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const health = this.#health;
    if (health.status !== "SERVING")
      return Promise.reject(
        new TesseraError(Code.UNAVAILABLE, `KV store ${op}: Redis unavailable: ${health.reason}`),
      );
    const abort = new AbortController();
    let work: Promise<T>;
    try {
      work = fn(abort.signal);
    } catch (err) {
      return Promise.reject(redisError(err, op));
    }
    return new Promise<T>((resolve, reject) => {
      let late = false;
      const cancel = this.#setTimer(() => {
        late = true;
        this.#stalled++;
        this.#update();
        const error = new TesseraError(
          Code.DEADLINE_EXCEEDED,
          `KV store ${op}: no answer from ${this.address} within ${this.#opTimeoutMs} ms`,
        );
        abort.abort(error);
        reject(error);
      }, this.#opTimeoutMs);
      const settle = () => {
        if (!late) return cancel();
        this.#stalled--;
        this.#update();
      };
      work.then(
        (value) => {
          settle();
          resolve(value);
        },
        (err: unknown) => {
          settle();
          reject(redisError(err, op));
        },
      );
    });
  }

  /** Closes the connection (QUIT, or a disconnect when Redis does not answer). */
  async close(): Promise<void> {
    if (this.redis.status === "ready") await this.run("close", () => this.redis.quit()).catch(() => {});
    this.redis.disconnect();
  }

  #update(): void {
    const next: KvStoreHealth =
      this.#ready && this.#stalled === 0
        ? { status: "SERVING" }
        : {
            status: "NOT_SERVING",
            reason: this.#ready
              ? `${this.address} stopped answering (an operation passed its deadline)`
              : (this.#lastError ?? `${this.address}: connection closed`),
          };
    if (sameHealth(this.#health, next)) return;
    this.#health = next;
    if (next.status === "SERVING") this.#logger?.info({ redis: this.address }, "KV store: Redis serving");
    else this.#logger?.warn({ redis: this.address, reason: next.reason }, "KV store: Redis not serving");
    for (const listener of [...this.#listeners]) listener(next);
  }
}

function sameHealth(a: KvStoreHealth, b: KvStoreHealth): boolean {
  if (a.status === "SERVING" || b.status === "SERVING") return a.status === b.status;
  return a.reason === b.reason;
}

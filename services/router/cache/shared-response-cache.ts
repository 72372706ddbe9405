// The response cache's optional Redis backing, shared by every router replica: a deterministic
// request one router answered is a hit on all of them (the in-process cache stays in front of it).
// Entries are JSON under `${keyPrefix}${cacheKey}` with the cache's TTL (PX). Redis is an
// optimisation here, never a dependency: a lookup that fails or takes longer than `timeoutMs` is a
// miss, a store that fails is dropped, and both are logged (at most once a minute).
import { Redis } from "ioredis";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { RouterEvent } from "../core/router-events.ts";

export interface SharedCacheConfig {
  /** redis://[user:password@]host:port[/db] or rediss:// for TLS. */
  url: string;
  keyPrefix: string;
  /** A lookup slower than this is a miss (the request goes upstream). */
  timeoutMs: number;
  /** Redis's password, where the URL carries none. */
  password?: string | undefined;
}

export interface CachedResponse {
  endpoint: string;
  events: RouterEvent[];
}

const LOG_EVERY_MS = 60_000;

/**
 * The Redis password from the variable cache.redis.passwordEnv names. A named variable that is not set
 * stops the start-up: the router would otherwise serve, silently without its shared cache.
 */
export function redisPassword(
  name: string | undefined,
  env: Record<string, string | undefined>,
): string | undefined {
  if (name === undefined) return undefined;
  const password = env[name];
  if (password === undefined)
    throw new TesseraError(
      Code.INVALID_ARGUMENT,
      `cache.redis.passwordEnv: the environment variable ${name} is not set`,
    );
  return password;
}

export class SharedResponseCache {
  readonly #redis: Redis;
  readonly #config: SharedCacheConfig;
  readonly #log: Logger;
  #lastLogged = 0;

  constructor(config: SharedCacheConfig, log: Logger) {
    this.#config = config;
    this.#log = log;
    // No offline queue and no retries per command: while Redis is away a lookup fails at once.
    this.#redis = new Redis(config.url, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: config.timeoutMs,
      retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
      ...(config.password !== undefined && { password: config.password }),
    });
    this.#redis.on("error", (err: Error) => this.#failed("connection", err));
  }

  /** The stored response, or undefined (none, or Redis failed to answer in time). */
  async get(key: string): Promise<CachedResponse | undefined> {
    try {
      const text = await this.#redis.get(this.#config.keyPrefix + key);
      return text === null ? undefined : (JSON.parse(text) as CachedResponse);
    } catch (err) {
      this.#failed("get", err);
      return undefined;
    }
  }

  set(key: string, value: CachedResponse, ttlMs: number): void {
    this.#redis
      .set(this.#config.keyPrefix + key, JSON.stringify(value), "PX", ttlMs)
      .catch((err: unknown) => this.#failed("set", err));
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  #failed(op: string, err: unknown): void {
    const now = Date.now();
    if (now - this.#lastLogged < LOG_EVERY_MS) return;
    this.#lastLogged = now;
    this.#log.warn(
      { op, err: err instanceof Error ? err.message : String(err) },
      "shared response cache unavailable",
    );
  }
}

// Completed responses of deterministic requests, by exact request key: least recently used entries
// go first when the entry count or the byte budget is exceeded, and entries expire after `ttlMs`.
// In-process; with cache.redis a SharedResponseCache (shared-response-cache.ts) stands behind it.
import type { Clock } from "../../kernel/clock.ts";

export interface ResponseCacheConfig {
  maxEntries: number;
  maxBytes: number;
  ttlMs: number;
}

interface Entry<V> {
  value: V;
  bytes: number;
  expiresAt: number;
}

export class ResponseCache<V> {
  readonly #config: ResponseCacheConfig;
  readonly #clock: Clock;
  // A Map iterates in insertion order: re-inserting on every hit keeps the least recently used first.
  readonly #entries = new Map<string, Entry<V>>();
  #bytes = 0;

  constructor(config: ResponseCacheConfig, clock: Clock) {
    this.#config = config;
    this.#clock = clock;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= this.#clock.now()) {
      this.#bytes -= entry.bytes;
      return undefined;
    }
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores a value; one larger than the whole byte budget is not kept. */
  set(key: string, value: V, bytes: number): void {
    this.#delete(key);
    if (bytes > this.#config.maxBytes || this.#config.maxEntries === 0) return;
    this.#entries.set(key, { value, bytes, expiresAt: this.#clock.now() + this.#config.ttlMs });
    this.#bytes += bytes;
    for (const [oldest] of this.#entries) {
      if (this.#entries.size <= this.#config.maxEntries && this.#bytes <= this.#config.maxBytes) break;
      this.#delete(oldest);
    }
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

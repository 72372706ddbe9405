// A store on a test Redis, for specs (here and in the engine's and router's suites).
import type { KvBlockFormat } from "./kv-block.ts";
import { testFormat } from "./kv-test-blocks.ts";
import type { SetTimer } from "./redis-connection.ts";
import { parseRedisKvConfig, type RedisKvConfigInput } from "./redis-kv-config.ts";
import { RedisKvStore } from "./redis-kv-store.ts";

export interface TestStoreOptions {
  config?: RedisKvConfigInput;
  format?: KvBlockFormat;
  setTimer?: SetTimer;
}

/** A started store on `url` (not necessarily SERVING: check `store.health`). */
export async function openTestStore(url: string, options: TestStoreOptions = {}): Promise<RedisKvStore> {
  const { value: config, error } = parseRedisKvConfig({ url, ...options.config });
  if (error) throw error;
  const store = new RedisKvStore({
    config,
    format: options.format ?? testFormat(),
    ...(options.setTimer && { setTimer: options.setTimer }),
  });
  await store.start();
  return store;
}

/** A deadline timer fired by the test: fire() runs every pending callback. */
export function manualTimer(): { setTimer: SetTimer; fire: () => void; pending: () => number } {
  const callbacks = new Set<() => void>();
  return {
    setTimer: (fn) => {
      callbacks.add(fn);
      return () => callbacks.delete(fn);
    },
    fire: () => {
      const due = [...callbacks];
      callbacks.clear();
      for (const fn of due) fn();
    },
    pending: () => callbacks.size,
  };
}

/** Collects unhandled rejections until stop(). */
export function trackUnhandledRejections(): { reasons: unknown[]; stop: () => void } {
  const reasons: unknown[] = [];
  const listener = (reason: unknown) => reasons.push(reason);
  process.on("unhandledRejection", listener);
  return { reasons, stop: () => process.off("unhandledRejection", listener) };
}

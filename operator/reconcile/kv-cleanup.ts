// Deletes a model's keys from its KV transfer store (Redis) when the model is deleted: SCAN for
// the model's key prefix and UNLINK what it finds, batch by batch.
import type { RespValue } from "./resp-client.ts";
import { RespConnection } from "./resp-client.ts";

export interface KvStoreTarget {
  /** host:port */
  address: string;
  db: number;
  password?: string;
}

export interface KvStoreCleaner {
  /** Deletes every key starting with prefix; resolves with how many were deleted. */
  deleteKeys(target: KvStoreTarget, prefix: string): Promise<number>;
}

/** Escapes glob characters so the prefix matches literally in SCAN MATCH. */
export function globPrefix(prefix: string): string {
  return `${prefix.replace(/[\\*?[\]]/g, (c) => `\\${c}`)}*`;
}

export class RedisKeyCleaner implements KvStoreCleaner {
  readonly #timeoutMs: number;

  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 5_000;
  }

  async deleteKeys(target: KvStoreTarget, prefix: string): Promise<number> {
    const colon = target.address.lastIndexOf(":");
    const host = target.address.slice(0, colon).replace(/^\[|\]$/g, "");
    const connection = await RespConnection.connect(
      host,
      Number(target.address.slice(colon + 1)),
      this.#timeoutMs,
    );
    try {
      if (target.password) await connection.command("AUTH", target.password);
      if (target.db !== 0) await connection.command("SELECT", String(target.db));
      let deleted = 0;
      let cursor = "0";
      do {
        const reply = await connection.command("SCAN", cursor, "MATCH", globPrefix(prefix), "COUNT", "1000");
        const [next, keys] = scanReply(reply);
        if (keys.length > 0) deleted += Number(await connection.command("UNLINK", ...keys));
        cursor = next;
      } while (cursor !== "0");
      return deleted;
    } finally {
      connection.close();
    }
  }
}

function scanReply(reply: RespValue): [string, string[]] {
  if (!Array.isArray(reply) || typeof reply[0] !== "string" || !Array.isArray(reply[1]))
    throw new Error(`unexpected SCAN reply ${JSON.stringify(reply)}`);
  return [reply[0], reply[1].map(String)];
}

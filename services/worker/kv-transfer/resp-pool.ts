// The block store's bulk connections: a few RespConnections to one Redis, so that the blocks of a
// batch move over several sockets at once (Redis reads and writes each socket in its own turn, and
// one socket's buffers fill before the server has caught up). Connections open when the store starts
// and a failed one is replaced when its turn comes again; health stays the control connection's (redis-connection.ts),
// which keeps the store from sending anything while Redis is known to be away.
import type { RedisOptions } from "ioredis";
import { type RespAddress, RespConnection } from "./resp-connection.ts";

export class RespPool {
  readonly #address: RespAddress;
  readonly #connections: (RespConnection | undefined)[];
  #next = 0;
  #closed = false;

  constructor(address: RespAddress, size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`size: ${size}, expected a positive integer`);
    this.#address = address;
    this.#connections = new Array<RespConnection | undefined>(size).fill(undefined);
  }

  get size(): number {
    return this.#connections.length;
  }

  /** Opens every connection now, so that the first batch does not wait for them. */
  open(): void {
    for (let i = 0; i < this.#connections.length; i++) this.#at(i);
  }

  /** The next connection in turn, opened (or reopened after a failure) when needed. */
  next(): RespConnection {
    const i = this.#next;
    this.#next = (i + 1) % this.#connections.length;
    return this.#at(i);
  }

  #at(i: number): RespConnection {
    if (this.#closed) throw new Error("connection closed");
    let connection = this.#connections[i];
    if (connection === undefined || !connection.usable) {
      connection = new RespConnection(this.#address);
      this.#connections[i] = connection;
    }
    return connection;
  }

  close(): void {
    this.#closed = true;
    for (const connection of this.#connections) connection?.close();
    this.#connections.fill(undefined);
  }
}

/** The address, credentials, database and TLS options of ioredis' options, for RespConnection. */
export function respAddress(options: RedisOptions): RespAddress {
  return {
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 6379,
    username: options.username,
    password: options.password,
    db: options.db,
    tls: options.tls,
    connectTimeoutMs: options.connectTimeout ?? 10_000,
  };
}

// One Redis connection for the block store's bulk path (SET and GET of whole blocks), speaking RESP2
// over a socket of its own instead of through ioredis, which copies every SET value into one buffer
// with its command and reassembles every GET reply from 64 KiB reads into a fresh buffer. Here a
// command's parts (the key line, the block's header, its payload as a view of the engine's floats)
// go to the socket as one writev, and a bulk reply is read by the kernel straight into the buffer the
// caller placed it in (plain TCP; over TLS each decrypted chunk is copied there once). Commands are
// pipelined: replies come back in order. Any socket failure rejects every pending command with a
// plain Error (UNAVAILABLE for the store); a reply error rejects its command with a RespReplyError.
import net from "node:net";
import tls from "node:tls";

/** A reply error of one command (OOM, WRONGPASS, …): named ReplyError as ioredis names them. */
export class RespReplyError extends Error {
  override get name(): string {
    return "ReplyError";
  }
}

export type RespReply = null | string | number | Buffer;

/** A command argument: a string, bytes, or one argument made of several byte ranges (header, payload). */
export type RespArg = string | Uint8Array | readonly Uint8Array[];

/** Where a bulk reply of `length` bytes goes: a buffer of exactly that length, or undefined (allocated). */
export type BulkTarget = (length: number) => Buffer | undefined;

export interface RespAddress {
  host: string;
  port: number;
  username?: string | undefined;
  password?: string | undefined;
  db?: number | undefined;
  tls?: tls.ConnectionOptions | undefined;
  connectTimeoutMs: number;
}

interface Pending {
  resolve: (reply: RespReply) => void;
  reject: (err: Error) => void;
  target: BulkTarget | undefined;
  /** AUTH or SELECT: an error reply fails the connection, and every command after it, at once. */
  handshake: boolean;
}

const CRLF = 0x0a;
const SCRATCH_BYTES = 64 * 1024;

export class RespConnection {
  readonly #socket: net.Socket;
  readonly #pending: Pending[] = [];
  #failed: Error | undefined;
  /** Bytes of a line (reply type and length) split across reads. */
  #line: Buffer[] = [];
  /** The bulk reply being read: its buffer, bytes filled, and the CRLF still to skip after it. */
  #bulk: Buffer | undefined;
  #filled = 0;
  #skip = 0;
  readonly #scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  /** The part of the open bulk reply handed to the kernel for the next read, if any. */
  #inPlace: Uint8Array | undefined;

  /** Connects (authenticating and selecting the database first); commands may be sent at once. */
  constructor(address: RespAddress) {
    const options = { host: address.host, port: address.port };
    if (address.tls !== undefined) {
      this.#socket = tls.connect({ ...options, ...address.tls });
      this.#socket.on("data", (chunk: Buffer) => this.#consume(chunk, 0, chunk.length));
    } else {
      // The kernel reads into the buffer #readTarget hands out: the open bulk reply's rest, or scratch.
      this.#socket = net.connect({
        ...options,
        onread: { buffer: () => this.#readTarget(), callback: (n, buf) => this.#onRead(n, buf) },
      });
    }
    this.#socket.setNoDelay(true);
    this.#socket.setTimeout(address.connectTimeoutMs, () =>
      this.#fail(new Error(`connect timeout after ${address.connectTimeoutMs} ms`)),
    );
    this.#socket.once(address.tls !== undefined ? "secureConnect" : "connect", () =>
      this.#socket.setTimeout(0),
    );
    this.#socket.on("error", (err) => this.#fail(err));
    this.#socket.on("close", () => this.#fail(new Error("connection closed")));
    if (address.password !== undefined) {
      const auth = address.username !== undefined ? [address.username, address.password] : [address.password];
      this.#handshake(["AUTH", ...auth]);
    }
    if (address.db !== undefined && address.db !== 0) this.#handshake(["SELECT", String(address.db)]);
  }

  /** False once the socket failed or closed: every later send rejects. */
  get usable(): boolean {
    return this.#failed === undefined;
  }

  /** Commands sent and not answered yet. */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Sends one command (its arguments as strings or bytes, the bytes written without copying them; the
   * caller leaves them unchanged until the reply) and resolves
   * with its reply; a bulk reply goes into what `target` returns for its length, when it returns one.
   */
  send(args: readonly RespArg[], target?: BulkTarget): Promise<RespReply> {
    return this.#send(args, target, false);
  }

  #send(args: readonly RespArg[], target: BulkTarget | undefined, handshake: boolean): Promise<RespReply> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    return new Promise<RespReply>((resolve, reject) => {
      this.#pending.push({ resolve, reject, target, handshake });
      const socket = this.#socket;
      socket.cork();
      let head = `*${args.length}\r\n`;
      for (const arg of args) {
        if (typeof arg === "string") {
          head += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
          continue;
        }
        const parts = arg instanceof Uint8Array ? [arg] : arg;
        socket.write(`${head}$${parts.reduce((n, part) => n + part.byteLength, 0)}\r\n`);
        for (const part of parts) socket.write(part);
        head = "\r\n";
      }
      socket.write(head);
      process.nextTick(() => socket.uncork());
    });
  }

  /** Closes the socket; pending commands reject. */
  close(): void {
    this.#fail(new Error("connection closed"));
  }

  #handshake(args: string[]): void {
    this.#send(args, undefined, true).catch(() => {}); // its error fails the connection (#reply)
  }

  #fail(err: Error): void {
    if (this.#failed === undefined) this.#failed = err;
    this.#socket.destroy();
    for (const pending of this.#pending.splice(0)) pending.reject(this.#failed);
  }

  #readTarget(): Uint8Array {
    const bulk = this.#bulk;
    this.#inPlace =
      bulk !== undefined && this.#filled < bulk.length ? bulk.subarray(this.#filled) : undefined;
    return this.#inPlace ?? this.#scratch;
  }

  #onRead(bytes: number, buf: Uint8Array): boolean {
    if (buf === this.#inPlace && this.#bulk !== undefined) {
      // The kernel wrote into the open bulk reply itself.
      this.#filled += bytes;
      if (this.#filled === this.#bulk.length) this.#skip = 2;
    } else this.#consume(buf, 0, bytes);
    return true;
  }

  /** Parses replies from `chunk[at, end)`. */
  #consume(chunk: Uint8Array, at: number, end: number): void {
    let p = at;
    while (p < end && this.#failed === undefined) {
      const bulk = this.#bulk;
      if (bulk !== undefined && this.#filled < bulk.length) {
        const n = Math.min(bulk.length - this.#filled, end - p);
        bulk.set(chunk.subarray(p, p + n), this.#filled);
        this.#filled += n;
        p += n;
        if (this.#filled === bulk.length) this.#skip = 2;
        continue;
      }
      if (bulk !== undefined) {
        const n = Math.min(this.#skip, end - p);
        this.#skip -= n;
        p += n;
        if (this.#skip === 0) {
          this.#bulk = undefined;
          this.#pending.shift()?.resolve(bulk);
        }
        continue;
      }
      const newline = chunk.indexOf(CRLF, p);
      if (newline < 0 || newline >= end) {
        this.#line.push(Buffer.from(chunk.subarray(p, end)));
        return;
      }
      const part = Buffer.from(chunk.buffer, chunk.byteOffset + p, newline + 1 - p);
      const line = this.#line.length === 0 ? part : Buffer.concat([...this.#line.splice(0), part]);
      p = newline + 1;
      this.#reply(line.toString("latin1", 0, line.length - 2));
    }
  }

  /** One reply line: a whole reply, or the start of a bulk one. */
  #reply(line: string): void {
    const pending = this.#pending[0];
    if (pending === undefined) {
      this.#fail(new Error(`unexpected reply ${JSON.stringify(line)}`));
      return;
    }
    const rest = line.slice(1);
    switch (line[0]) {
      case "+":
        this.#answer(rest);
        break;
      case "-":
        if (pending.handshake) this.#fail(new RespReplyError(rest));
        else this.#answer(new RespReplyError(rest));
        break;
      case ":":
        this.#answer(Number(rest));
        break;
      case "$":
        this.#bulkStart(pending, Number(rest));
        break;
      default:
        this.#fail(new Error(`unsupported reply ${JSON.stringify(line.slice(0, 40))}`));
    }
  }

  #answer(reply: RespReply | RespReplyError): void {
    const pending = this.#pending.shift()!;
    if (reply instanceof RespReplyError) pending.reject(reply);
    else pending.resolve(reply);
  }

  #bulkStart(pending: Pending, length: number): void {
    if (length === -1) {
      this.#answer(null);
      return;
    }
    if (!Number.isInteger(length) || length < 0) {
      this.#fail(new Error(`bad bulk length ${length}`));
      return;
    }
    const target = pending.target?.(length);
    this.#bulk = target?.length === length ? target : Buffer.allocUnsafe(length);
    this.#filled = 0;
    this.#skip = length === 0 ? 2 : 0;
  }
}

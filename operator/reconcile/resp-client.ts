// The smallest Redis client the finalizer needs: one connection, commands sent as RESP arrays,
// replies parsed (simple strings, errors, integers, bulk strings, arrays). No pipelining beyond
// one command at a time; every command has a deadline.
import net from "node:net";
import { Code, TesseraError } from "../../services/kernel/errors.ts";

export type RespValue = string | number | null | RespValue[];

export function encodeCommand(args: readonly string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(""));
}

/** Parses one reply from the start of buf: the value and the bytes it used, or undefined if incomplete. */
export function parseReply(buf: Buffer, at = 0): { value: RespValue | Error; end: number } | undefined {
  const lineEnd = buf.indexOf("\r\n", at);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buf[at] ?? 0);
  const line = buf.toString("utf8", at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case "+":
      return { value: line, end: next };
    case "-":
      return { value: new Error(line), end: next };
    case ":":
      return { value: Number(line), end: next };
    case "$": {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return undefined;
      return { value: buf.toString("utf8", next, next + length), end: next + length + 2 };
    }
    case "*": {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let end = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, end);
        if (!item) return undefined;
        if (item.value instanceof Error) return item;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default:
      return { value: new Error(`unexpected RESP type ${JSON.stringify(type)}`), end: buf.length };
  }
}

export class RespConnection {
  readonly #socket: net.Socket;
  readonly #timeoutMs: number;
  #buffer = Buffer.alloc(0);
  #waiting: { resolve: (v: RespValue) => void; reject: (e: Error) => void } | undefined;
  #closed: Error | undefined;

  private constructor(socket: net.Socket, timeoutMs: number) {
    this.#socket = socket;
    this.#timeoutMs = timeoutMs;
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("error", (err) => this.#fail(err));
    socket.on("close", () => this.#fail(new Error("connection closed")));
  }

  static connect(host: string, port: number, timeoutMs: number): Promise<RespConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      const timer = setTimeout(
        () => socket.destroy(new Error(`no connection to ${host}:${port} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      socket.once("error", (err) => {
        clearTimeout(timer);
        reject(unavailable(err));
      });
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.removeAllListeners("error");
        resolve(new RespConnection(socket, timeoutMs));
      });
    });
  }

  /** Sends one command; without a reply within the timeout the connection is closed and it fails. */
  command(...args: string[]): Promise<RespValue> {
    if (this.#closed) return Promise.reject(unavailable(this.#closed));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.#socket.destroy(new Error(`no reply in ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
      const settle =
        <T>(fn: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          fn(value);
        };
      this.#waiting = { resolve: settle(resolve), reject: settle(reject) };
      this.#socket.write(encodeCommand(args));
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    const reply = parseReply(this.#buffer);
    if (!reply) return;
    this.#buffer = this.#buffer.subarray(reply.end);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (reply.value instanceof Error)
      waiting?.reject(new TesseraError(Code.FAILED_PRECONDITION, `redis: ${reply.value.message}`));
    else waiting?.resolve(reply.value);
  }

  #fail(err: Error): void {
    this.#closed ??= err;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(unavailable(err));
  }
}

function unavailable(err: Error): TesseraError {
  return new TesseraError(Code.UNAVAILABLE, `redis: ${err.message}`, { cause: err });
}

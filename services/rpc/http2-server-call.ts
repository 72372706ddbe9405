// A server-streaming gRPC call served straight on its HTTP/2 stream (the router's front door's,
// rpc/h2/, or node:http2's: CallStream), for the one call a router makes per generation and streams
// every token of (issue 22). grpc-js wraps each call in an intercepting call, a server stream object,
// a decoder, a metadata object per message sent and a write callback per message; under 64
// concurrent generations those objects are a third of what outlives the router's young collections.
// Here a call is this object and its stream: the request is read whole, the response messages are
// written as they come (prefixed by their producer, see framedGenerateResponse) and the status goes
// out as trailers.
//
// What a client sees is what grpc-js's server sends: the same response headers, a trailers-only
// response for a call that fails before its first message, the same status codes and messages for a
// request too large, compressed with an unknown encoding, missing or repeated, an invalid grpc-timeout
// and a deadline that passes (DEADLINE_EXCEEDED, then the call is cancelled), and INVALID_ARGUMENT
// naming `request` for bytes that are not the request type (as refuseUndecodableRequests answers).
import { constants, type IncomingHttpHeaders } from "node:http2";
import { gunzipSync, inflateSync } from "node:zlib";
import { Metadata } from "@grpc/grpc-js";
import { Code } from "../kernel/errors.ts";
import { CANCELLED_BY_CLIENT } from "./in-flight.ts";
import { statusDetails } from "./status-details.ts";
import { GRPC_PREFIX_BYTES } from "./stream-codecs.ts";

/**
 * The response headers as a flat [name, value, ...] list: node:http2 keeps the list a stream was
 * answered with for the stream's life, and a list is a small array where a headers object becomes a
 * null-prototype dictionary (~0.5 KB per call, outliving the router's young collections: issue 22).
 * Node appends the date to the list it is given, so each response gets its own copy.
 */
const RESPONSE_HEADERS: readonly string[] = [
  constants.HTTP2_HEADER_STATUS,
  String(constants.HTTP_STATUS_OK),
  constants.HTTP2_HEADER_CONTENT_TYPE,
  "application/grpc+proto",
  "grpc-accept-encoding",
  "identity,deflate,gzip",
  "grpc-encoding",
  "identity",
];
/** What a call holds instead of its stream once the stream closed. */
const CLOSED_STREAM: CallStream = {
  destroyed: true,
  closed: true,
  on: () => undefined,
  once: () => undefined,
  off: () => undefined,
  respond: () => {},
  write: () => false,
  end: () => undefined,
  sendTrailers: () => {},
  resume: () => undefined,
};
/** A stream's 'error' is followed by 'close', which is where the call learns of it. */
const ignore = () => {};
const WITH_TRAILERS = { waitForTrailers: true };
const END_STREAM = { endStream: true };
const DEADLINE = /(\d{1,8})\s*([HMSmun])/;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000_001 };
/** Headers grpc-js keeps from the handler's metadata; the same are left out here. */
const TRANSPORT_HEADERS = [
  "grpc-timeout",
  "grpc-encoding",
  "grpc-accept-encoding",
  "accept-encoding",
  "te",
  "content-type",
];

// biome-ignore lint/suspicious/noExplicitAny: node:http2's own listener type, which a CallStream must accept
type Listener = (...args: any[]) => void;

/** Serves one gRPC stream of its path (the router's Generate): node:http2's or our front door's. */
export type CallHandler = (stream: CallStream, headers: IncomingHttpHeaders, path: string) => void;

/**
 * What a call needs of its server stream: node:http2's ServerHttp2Stream, or a stream of our own
 * front door (h2/h2-server-stream.ts).
 */
export interface CallStream {
  readonly destroyed: boolean;
  readonly closed: boolean;
  on(event: string, listener: Listener): unknown;
  once(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  respond(
    headers: readonly string[] | Record<string, string>,
    options: { waitForTrailers?: boolean; endStream?: boolean },
  ): void;
  write(chunk: Buffer): unknown;
  end(): unknown;
  sendTrailers(trailers: Record<string, string>): void;
  resume(): unknown;
}

export interface RequestType<T> {
  typeName: string;
  decode(bytes: Uint8Array): T;
}

/** Whether a stream's headers are a gRPC call's (grpc-js answers the others: 415). */
export function isGrpcCall(headers: IncomingHttpHeaders): boolean {
  const type = headers[constants.HTTP2_HEADER_CONTENT_TYPE];
  return typeof type === "string" && type.startsWith("application/grpc");
}

export class Http2ServerCall {
  readonly path: string;
  /** When the client's deadline passes (ms since the epoch); Infinity without one. */
  readonly deadline: number = Number.POSITIVE_INFINITY;
  /** The client went away, the deadline passed or the call failed: nothing more is sent. */
  cancelled = false;
  /** Aborted with CANCELLED_BY_CLIENT once when the call is cancelled before it ended (abortOnCancel). */
  #abortOnCancel: AbortController | undefined;
  #stream: CallStream;
  /**
   * The request's headers, until the handler has started the call (serve's `start`, which reads its
   * metadata there): then let go, as are their values (node:http2 makes each an external string,
   * which a full GC has to finalize once it outlived a young collection).
   */
  #headers: IncomingHttpHeaders | undefined;
  #metadata: Metadata | undefined;
  #headersSent = false;
  #ended = false;
  #timer: NodeJS.Timeout | undefined;
  #chunks: Buffer[] = [];
  #received = 0;
  /** Resolves what closed() returned, once the stream closes. */
  readonly #whenClosed: (() => void)[] = [];
  /**
   * The call's 'close' listener. Like its 'data' and 'end' ones (#listeners) it is taken off the stream
   * when the stream closes; node:http2's own listeners stay, as it may still need them after 'close'.
   * Made with the call (a field initializer), not assigned later: see #listeners.
   */
  readonly #onClose = () => this.#closed();
  /**
   * The call's 'data' and 'end' listeners, in an array made with them. V8 keeps a function assigned to
   * an object's field after the object was made, and all it reaches, until the next full GC: with them
   * in two fields, every call and its stream were promoted (bench/suites/router/call-retention.ts:
   * ~310 KB per scavenge, against 1 KB this way). The same holds for every per-call function here.
   */
  #listeners: readonly [(chunk: Buffer) => void, () => void] | undefined;

  /**
   * Takes a gRPC stream: reads its one request message and hands it to `start` once the client
   * half-closes, or answers the stream's status itself when the request cannot be read. The call's
   * metadata (get, metadata) is read in `start`; the headers are let go once it returns. `path` is
   * the method's (the stream's :path, as the caller routed it).
   */
  static serve<Req>(
    stream: CallStream,
    headers: IncomingHttpHeaders,
    path: string,
    type: RequestType<Req>,
    maxRequestBytes: number,
    start: (call: Http2ServerCall, request: Req) => void,
  ): void {
    const call = new Http2ServerCall(stream, headers, path);
    if (call.cancelled) return;
    // Neither listener holds the headers; both are taken off the stream when it closes (#closed).
    const listeners = [
      (chunk: Buffer) => call.#receive(chunk, maxRequestBytes),
      () => call.#start(type, maxRequestBytes, start),
    ] as const;
    call.#listeners = listeners;
    stream.on("data", listeners[0]);
    stream.once("end", listeners[1]);
  }

  #start<Req>(
    type: RequestType<Req>,
    max: number,
    start: (call: Http2ServerCall, request: Req) => void,
  ): void {
    const encoding = this.#headers?.["grpc-encoding"];
    try {
      if (this.cancelled || this.#ended) return;
      const request = this.#request(encoding, type, max);
      if (request !== undefined) start(this, request);
    } finally {
      this.#headers = undefined;
    }
  }

  private constructor(stream: CallStream, headers: IncomingHttpHeaders, path: string) {
    this.#stream = stream;
    this.#headers = headers;
    this.path = path;
    stream.on("error", ignore);
    // 'close' comes once; closed() waits through this listener rather than adding and removing
    // its own (removing one deletes a key of the stream's listener object: a dictionary after).
    stream.on("close", this.#onClose);
    const timeout = headers["grpc-timeout"];
    if (timeout !== undefined) {
      const match = DEADLINE.exec(String(timeout));
      if (match === null) {
        this.end(Code.INTERNAL, `Invalid grpc-timeout value "${timeout}"`);
        return;
      }
      const ms = (Number(match[1]) * UNIT_MS[match[2]!]!) | 0;
      this.deadline = Date.now() + ms;
      this.#timer = setTimeout(() => this.end(Code.DEADLINE_EXCEEDED, "Deadline exceeded"), ms);
    }
  }

  /**
   * The values of one metadata key, as grpc-js's Metadata.get gives them, read from the headers
   * without building a Metadata (a Map and a copy of every header, per call).
   */
  get(key: string): (string | Buffer)[] {
    const headers = this.#readableHeaders();
    if (TRANSPORT_HEADERS.includes(key) || key.startsWith(":")) return [];
    const value = headers[key];
    if (value === undefined) return [];
    const values = Array.isArray(value) ? value : [value];
    return key.endsWith("-bin")
      ? values.flatMap((v) => v.split(",")).map((v) => Buffer.from(v, "base64"))
      : values;
  }

  /** The call's metadata, as grpc-js hands it to a handler (transport headers left out); built on first use. */
  get metadata(): Metadata {
    if (this.#metadata === undefined) {
      this.#metadata = Metadata.fromHttp2Headers(this.#readableHeaders());
      for (const name of TRANSPORT_HEADERS) this.#metadata.remove(name);
    }
    return this.#metadata;
  }

  /** Sends the response headers with `custom` metadata; the first message sends them without. */
  sendHeaders(custom?: Record<string, string>): void {
    if (this.#headersSent || this.#ended || this.#gone()) return;
    this.#headersSent = true;
    this.#stream.respond(withHeaders(custom), WITH_TRAILERS);
  }

  /** Sends one message, already framed (prefix and bytes); the stream buffers it for a slow reader. */
  write(frame: Buffer): void {
    if (this.#ended || this.#gone()) return;
    if (!this.#headersSent) this.sendHeaders();
    this.#stream.write(frame);
  }

  /**
   * Ends the call with a status and trailing metadata: as trailers after the messages sent, or as a
   * trailers-only response when none was. A call that ends with an error is then cancelled (as
   * grpc-js does), so whatever still works on it stops.
   */
  end(code: Code, details = "", trailers?: Record<string, string>): void {
    if (this.#ended || this.cancelled) return;
    this.#ended = true;
    clearTimeout(this.#timer);
    const stream = this.#stream;
    if (stream.destroyed || stream.closed) {
      this.#cancelled();
      return;
    }
    const status: Record<string, string> = {
      "grpc-status": String(code),
      "grpc-message": encodeURI(statusDetails(details)),
    };
    if (trailers) Object.assign(status, trailers);
    if (this.#headersSent) {
      stream.once("wantTrailers", () => stream.sendTrailers(status));
      stream.end();
    } else stream.respond(withHeaders(status), END_STREAM);
    if (code !== Code.OK) this.#cancelled();
  }

  /** `controller` is aborted with CANCELLED_BY_CLIENT if the call is cancelled before it ends. */
  abortOnCancel(controller: AbortController): void {
    if (this.cancelled) controller.abort(CANCELLED_BY_CLIENT);
    else if (!this.#ended) this.#abortOnCancel = controller;
  }

  /** Whether a controller still waits to be aborted on cancellation (none once the call is over). */
  get abortsOnCancel(): boolean {
    return this.#abortOnCancel !== undefined;
  }

  /** Resolves when the stream is closed (everything sent, or the call cancelled), or `signal` aborts. */
  closed(signal?: AbortSignal): Promise<void> {
    const stream = this.#stream;
    if (stream.closed || stream.destroyed || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.#whenClosed.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  #readableHeaders(): IncomingHttpHeaders {
    if (this.#headers === undefined) throw new Error("a call's metadata is read when the call starts");
    return this.#headers;
  }

  /**
   * Whether the call is cancelled, counting a stream already destroyed whose 'close' has not come yet
   * (the client reset it): writing to it would throw.
   */
  #gone(): boolean {
    if (!this.cancelled && (this.#stream.destroyed || this.#stream.closed)) this.#closed();
    return this.cancelled;
  }

  /**
   * The stream closed: a cancellation unless the call had ended. Then the stream lets go of the call:
   * node:http2 keeps a closed stream, and whatever it references, until V8's next full collection
   * (bench/suites/router/h2-retention.ts), so every request's objects reachable from its listeners
   * were promoted to the old generation, whatever its length (issue 22).
   */
  #closed(): void {
    clearTimeout(this.#timer);
    if (!this.#ended) this.#cancelled();
    for (const waiting of this.#whenClosed.splice(0)) waiting();
    this.#abortOnCancel = undefined;
    const stream = this.#stream;
    stream.off("close", this.#onClose);
    const listeners = this.#listeners;
    if (listeners) {
      stream.off("data", listeners[0]);
      stream.off("end", listeners[1]);
    }
    this.#listeners = undefined;
    // A call that V8 keeps past its end (see #listeners) need not keep its stream, with the stream's
    // queue and listeners. Every use of the stream after this sees it closed.
    this.#stream = CLOSED_STREAM;
  }

  #cancelled(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    // The rest of the request, if any, is read and dropped.
    this.#stream.resume();
    const controller = this.#abortOnCancel;
    this.#abortOnCancel = undefined;
    controller?.abort(CANCELLED_BY_CLIENT);
  }

  #receive(chunk: Buffer, maxRequestBytes: number): void {
    if (this.cancelled || this.#ended) return;
    this.#chunks.push(chunk);
    this.#received += chunk.byteLength;
    if (this.#received < GRPC_PREFIX_BYTES || this.#chunks.length > 1 || maxRequestBytes < 0) return;
    // The first message's length, checked as soon as it is known (a later one is refused anyway).
    const length = chunk.readUInt32BE(1);
    if (length > maxRequestBytes)
      this.end(Code.RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs ${maxRequestBytes})`);
  }

  /** The one request message, or undefined after answering why there is none. */
  #request<T>(encoding: string | string[] | undefined, type: RequestType<T>, max: number): T | undefined {
    const bytes = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    this.#chunks = [];
    const length = bytes.byteLength >= GRPC_PREFIX_BYTES ? bytes.readUInt32BE(1) : -1;
    if (length < 0 || bytes.byteLength < GRPC_PREFIX_BYTES + length) {
      this.end(Code.UNIMPLEMENTED, `Received no request message for server streaming method ${this.path}`);
      return undefined;
    }
    if (max >= 0 && length > max) {
      this.end(Code.RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs ${max})`);
      return undefined;
    }
    if (bytes.byteLength > GRPC_PREFIX_BYTES + length) {
      this.end(
        Code.UNIMPLEMENTED,
        `Received a second request message for server streaming method ${this.path}`,
      );
      return undefined;
    }
    let message = bytes.subarray(GRPC_PREFIX_BYTES);
    if (bytes[0] === 1 && encoding !== undefined && encoding !== "identity") {
      const inflated = this.#inflate(message, String(encoding), max);
      if (inflated === undefined) return undefined;
      message = inflated;
    }
    try {
      return type.decode(message);
    } catch (err) {
      this.end(Code.INVALID_ARGUMENT, `request: not a valid ${type.typeName}: ${(err as Error).message}`);
      return undefined;
    }
  }

  #inflate(message: Buffer, encoding: string, max: number): Buffer | undefined {
    if (encoding !== "gzip" && encoding !== "deflate") {
      this.end(Code.UNIMPLEMENTED, `Received message compressed with unsupported encoding "${encoding}"`);
      return undefined;
    }
    try {
      const options = max >= 0 ? { maxOutputLength: Math.max(max, 1) } : {};
      return encoding === "gzip" ? gunzipSync(message, options) : inflateSync(message, options);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
        this.end(Code.RESOURCE_EXHAUSTED, `Received message that decompresses to a size larger than ${max}`);
      else this.end(Code.INTERNAL, "Failed to decompress message");
      return undefined;
    }
  }
}

/** The response headers, then `more` (names other than theirs), as node:http2's flat list. */
function withHeaders(more: Record<string, string> | undefined): string[] {
  const headers = RESPONSE_HEADERS.slice();
  if (more) for (const name in more) headers.push(name, more[name]!);
  return headers;
}

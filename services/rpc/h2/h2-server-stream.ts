// One stream of an H2Connection on the server side: the request's DATA comes out as 'data' and
// 'end', the response goes in through respond / write / end / sendTrailers, and 'close' comes once
// when the stream is done either way. This is the part of node:http2's ServerHttp2Stream that a gRPC
// call uses (http2-server-call.ts takes either); it is an EventEmitter, but nothing outside its
// connection's slot table holds it, so a finished stream is garbage at once (issue 22).
import { EventEmitter } from "node:events";
import Denque from "denque";

/** What a stream asks of its connection. */
export interface StreamSink {
  sendHeaders(stream: H2ServerStream, fields: readonly string[], endStream: boolean): void;
  /** The stream has DATA queued, or an end or trailers waiting behind it. */
  schedule(stream: H2ServerStream): void;
  reset(stream: H2ServerStream, code: number): void;
}

/**
 * Headers or trailers: a [name, value, ...] list, or an object of them as node:http2 hands them over
 * (repeated names as arrays, `:status` a number, absent values undefined).
 */
export type HeaderFields =
  | readonly string[]
  | Readonly<Record<string, string | number | readonly string[] | undefined>>;

export interface RespondOptions {
  /** Trailers follow the data: 'wantTrailers' is emitted once it is all sent (then sendTrailers). */
  waitForTrailers?: boolean;
  /** The headers end the stream (a trailers-only gRPC response). */
  endStream?: boolean;
}

export class H2ServerStream extends EventEmitter {
  readonly id: number;
  /** The stream is done: both sides ended, or it was reset. */
  closed = false;
  /** The stream's response headers went out. */
  headersSent = false;

  // The connection's bookkeeping (h2-connection.ts).
  /** Where the stream sits in its connection's slot table. */
  slot = -1;
  /** Bytes the peer lets us send on this stream now. */
  sendWindow: number;
  /** DATA received and not yet given back to the peer as window. */
  unacknowledged = 0;
  /** Bytes the peer may still send on this stream before it waits for a window update. */
  receiveWindow: number;
  /**
   * DATA payloads waiting for window, and how far into the first one is sent. A ring that keeps its
   * storage: an array emptied by shift() gets a new backing store on its next push, which for a
   * streamed response is one per message (a token).
   */
  readonly queue = new Denque<Uint8Array>();
  queueOffset = 0;
  queuedBytes = 0;
  /** end() was called: after the queue, trailers (waitForTrailers) or an empty END_STREAM DATA. */
  ending = false;
  waitForTrailers = false;
  /** 'wantTrailers' was emitted. */
  trailersAsked = false;
  /** Trailers to send once the queue is empty. */
  trailers: readonly string[] | undefined;
  /** END_STREAM sent; END_STREAM received. */
  localEnded = false;
  remoteEnded = false;
  /** In the connection's list of streams with something to send. */
  scheduled = false;

  readonly #sink: StreamSink;

  constructor(id: number, sink: StreamSink, sendWindow: number, receiveWindow: number) {
    super();
    this.id = id;
    this.#sink = sink;
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  /** The same as closed: a stream here is destroyed exactly when it is closed. */
  get destroyed(): boolean {
    return this.closed;
  }

  /** Sends the response headers: a [name, value, ...] list or an object of them. */
  respond(headers: HeaderFields, options: RespondOptions = {}): void {
    if (this.closed) return;
    if (this.headersSent) throw new Error(`stream ${this.id}: response headers already sent`);
    this.headersSent = true;
    this.waitForTrailers = options.waitForTrailers === true;
    this.#sink.sendHeaders(this, fieldList(headers), options.endStream === true);
  }

  /** Queues DATA; true (the stream buffers for a slow reader, as node:http2's does). */
  write(chunk: Uint8Array): boolean {
    if (this.closed || this.ending || this.localEnded) return false;
    if (!this.headersSent) this.respond([":status", "200"]);
    if (chunk.byteLength === 0) return true;
    this.queue.push(chunk);
    this.queuedBytes += chunk.byteLength;
    this.#sink.schedule(this);
    return true;
  }

  /** Ends the response once the queued DATA is sent: then 'wantTrailers', or END_STREAM. */
  end(): void {
    if (this.closed || this.ending || this.localEnded) return;
    if (!this.headersSent) this.respond([":status", "200"]);
    this.ending = true;
    this.#sink.schedule(this);
  }

  /** The trailers, after every DATA queued; they end the stream. */
  sendTrailers(trailers: HeaderFields): void {
    if (this.closed || this.localEnded) return;
    this.trailers = fieldList(trailers);
    this.ending = true;
    this.#sink.schedule(this);
  }

  /** Resets the stream with an HTTP/2 error code (CANCEL by default). */
  close(code = 0x8): void {
    if (!this.closed) this.#sink.reset(this, code);
  }

  /** Data is handed on as it comes; there is nothing to resume. */
  resume(): this {
    return this;
  }
}

/**
 * `headers` as a [name, value, ...] list with names in lower case, pseudo-headers first; array values
 * repeat the name, undefined ones are left out.
 */
function fieldList(headers: HeaderFields): string[] {
  if (isList(headers)) return headers.map((v, i) => (i % 2 === 0 ? v.toLowerCase() : v));
  const out: string[] = [];
  // Pseudo-headers first (RFC 9113 8.3).
  for (const pass of [true, false])
    for (const name of Object.keys(headers)) {
      if (name.startsWith(":") !== pass) continue;
      const value = headers[name];
      if (value === undefined) continue;
      for (const one of typeof value === "object" ? value : [value])
        out.push(name.toLowerCase(), String(one));
    }
  return out;
}

function isList(headers: HeaderFields): headers is readonly string[] {
  return Array.isArray(headers);
}

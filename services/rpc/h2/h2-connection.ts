// The server side of one HTTP/2 connection (RFC 9113) over a socket, for the router's front door
// (issue 22). node:http2 keeps every server stream that was alive at a young-generation collection,
// and what it references, until the next full collection (bench/suites/router/h2-retention.ts), so
// each request's state was promoted and the mark-compacts grew past 10 ms; a server with the same
// load whose streams sit only in array slots promoted ~1 KB per collection instead of ~830 KB
// (h2-retention `raw`). Here a stream lives in this connection's slot table from its HEADERS to its
// end, and nothing else of the connection refers to it.
//
// What it does: the preface and SETTINGS exchange, PING, GOAWAY both ways, RST_STREAM, HEADERS with
// CONTINUATION, padding and priority (priority ignored), flow control both ways (received DATA is
// given back as window when half the window is used; sent DATA waits for the peer's window), the
// peer's frame size, and connection and stream errors as the RFC says. Not here: server push (never
// sent, ENABLE_PUSH ignored), extended CONNECT, and h2c upgrade from HTTP/1.1.
import type { Socket } from "node:net";
import { SlotTable } from "../../kernel/slot-table.ts";
import {
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FRAME_HEADER_BYTES,
  FrameType,
  frame,
  goawayFrame,
  MAX_FRAME_SIZE,
  MAX_WINDOW,
  MIN_FRAME_SIZE,
  PREFACE,
  rstStreamFrame,
  Setting,
  settingsFrame,
  unpadded,
  windowUpdateFrame,
  writeFrameHeader,
} from "./h2-frames.ts";
import { H2ServerStream, type StreamSink } from "./h2-server-stream.ts";
import { encodeHeaders, HeaderDecoder, type HeaderList, HeaderListTooLarge } from "./hpack.ts";

export interface H2ConnectionOptions {
  /** A new stream and its request headers ([name, value, ...]); the stream's 'data'/'end' follow. */
  onStream(stream: H2ServerStream, headers: HeaderList): void;
  /** The window this side gives each stream and the connection, in bytes (default 1 MiB). */
  receiveWindow?: number;
  /** The largest header list accepted, as HPACK counts it (default 64 KiB). */
  maxHeaderListBytes?: number;
  /**
   * A fault of this side (a handler or listener that threw): its stream is reset with INTERNAL_ERROR,
   * or, outside any stream, the connection ends with it; the process goes on. Default: rethrown.
   */
  onError?: (err: unknown) => void;
}

/** A connection-level error: the connection ends with GOAWAY carrying `code`. */
class ConnectionError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

export class H2Connection implements StreamSink {
  readonly #socket: Socket;
  readonly #onStream: H2ConnectionOptions["onStream"];
  readonly #onError: ((err: unknown) => void) | undefined;
  readonly #receiveWindow: number;
  readonly #maxHeaderListBytes: number;
  readonly #decoder = new HeaderDecoder();
  readonly #streams = new SlotTable<H2ServerStream>();

  #input: Buffer = Buffer.alloc(0);
  #prefaceSeen = false;
  #settingsSeen = false;
  /** The highest stream id the peer opened. */
  #lastStreamId = 0;
  /** A header block being read across CONTINUATION frames. */
  #continuation: { streamId: number; flags: number; fragments: Buffer[]; bytes: number } | undefined;

  // Peer settings.
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = MIN_FRAME_SIZE;

  #sendWindow = DEFAULT_WINDOW;
  #unacknowledged = 0;
  /** Streams with DATA, an end or trailers waiting, in the order they asked. */
  readonly #sendable: H2ServerStream[] = [];
  // What the next flush writes, in order, as entries of four arrays: bytes[start, end), after a DATA
  // frame header for stream `dataStream` unless that is -1 (the bytes are frames made whole). A DATA
  // frame's header is written into the flush's buffer, not into a buffer of its own beside a view of
  // the payload. The arrays are reused from flush to flush, never emptied: an emptied array's next
  // push allocates a new backing store, once per flush here, that is once per relayed token.
  readonly #outBytes: (Uint8Array | undefined)[] = [];
  readonly #outStart: number[] = [];
  readonly #outEnd: number[] = [];
  readonly #outDataStream: number[] = [];
  #outCount = 0;
  #outLength = 0;
  #flushQueued = false;
  /** GOAWAY sent (shutdown) or received: no new streams; the socket ends once none is left. */
  #goingAway = false;
  #done = false;
  readonly #whenDone: Promise<void>;
  #resolveDone: () => void = () => {};

  constructor(socket: Socket, options: H2ConnectionOptions) {
    this.#socket = socket;
    this.#onStream = options.onStream;
    this.#onError = options.onError;
    this.#receiveWindow = Math.min(options.receiveWindow ?? 1 << 20, MAX_WINDOW);
    this.#maxHeaderListBytes = options.maxHeaderListBytes ?? 64 * 1024;
    this.#whenDone = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    socket.setNoDelay(true);
    const ours = new Map<number, number>([
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, this.#receiveWindow],
      [Setting.MAX_HEADER_LIST_SIZE, this.#maxHeaderListBytes],
    ]);
    this.#send(settingsFrame(ours));
    if (this.#receiveWindow > DEFAULT_WINDOW)
      this.#send(windowUpdateFrame(0, this.#receiveWindow - DEFAULT_WINDOW));
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
    socket.on("error", () => this.#finish());
    socket.on("close", () => this.#finish());
  }

  /** Streams open now. */
  get streams(): number {
    return this.#streams.size;
  }

  /** Resolves once the socket is closed and every stream with it. */
  get done(): Promise<void> {
    return this.#whenDone;
  }

  /** Graceful end: GOAWAY (no new streams), then the socket ends once the open streams are done. */
  goAway(): void {
    if (this.#goingAway || this.#done) return;
    this.#goingAway = true;
    this.#send(goawayFrame(this.#lastStreamId, ErrorCode.NO_ERROR));
    this.#endIfIdle();
  }

  /** Ends the connection now: its open streams close as cancelled. */
  destroy(): void {
    this.#socket.destroy();
    this.#finish();
  }

  // StreamSink

  sendHeaders(stream: H2ServerStream, fields: readonly string[], endStream: boolean): void {
    if (stream.closed || this.#done) return;
    this.#headerFrames(stream.id, fields, endStream);
    if (endStream) this.#localEnd(stream);
  }

  schedule(stream: H2ServerStream): void {
    if (stream.scheduled || stream.closed) return;
    stream.scheduled = true;
    this.#sendable.push(stream);
    this.#queueFlush();
  }

  reset(stream: H2ServerStream, code: number): void {
    this.#closeStream(stream, code, true);
  }

  // Reading

  #read(chunk: Buffer): void {
    if (this.#done) return;
    this.#input = this.#input.length === 0 ? chunk : Buffer.concat([this.#input, chunk]);
    try {
      if (!this.#prefaceSeen) {
        const n = Math.min(this.#input.length, PREFACE.length);
        if (!this.#input.subarray(0, n).equals(PREFACE.subarray(0, n)))
          throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "not an HTTP/2 connection preface");
        if (n < PREFACE.length) return;
        this.#prefaceSeen = true;
        this.#input = this.#input.subarray(PREFACE.length);
      }
      let input = this.#input;
      while (input.length >= FRAME_HEADER_BYTES && !this.#done) {
        const length = (input[0]! << 16) | (input[1]! << 8) | input[2]!;
        if (length > MIN_FRAME_SIZE)
          throw new ConnectionError(
            ErrorCode.FRAME_SIZE_ERROR,
            `frame of ${length} bytes over ${MIN_FRAME_SIZE}`,
          );
        if (input.length < FRAME_HEADER_BYTES + length) break;
        const type = input[3]!;
        const flags = input[4]!;
        const streamId = input.readUInt32BE(5) & 0x7fffffff;
        const payload = input.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length);
        input = input.subarray(FRAME_HEADER_BYTES + length);
        this.#frame(type, flags, streamId, payload);
      }
      // What is left is part of a frame: a copy, so the socket's chunk is not kept for it.
      this.#input = input.length === 0 ? Buffer.alloc(0) : Buffer.from(input);
    } catch (err) {
      if (err instanceof ConnectionError) this.#connectionError(err.code);
      else if (this.#onError) {
        this.#onError(err);
        this.#connectionError(ErrorCode.INTERNAL_ERROR);
      } else throw err;
    }
    this.#flush();
  }

  #frame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (!this.#settingsSeen && type !== FrameType.SETTINGS)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "the first frame is not SETTINGS");
    const continuation = this.#continuation;
    if (continuation && (type !== FrameType.CONTINUATION || streamId !== continuation.streamId))
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "a header block was interrupted");
    switch (type) {
      case FrameType.DATA: {
        this.#data(flags, streamId, payload);
        return;
      }
      case FrameType.HEADERS: {
        this.#headers(flags, streamId, payload);
        return;
      }
      case FrameType.CONTINUATION: {
        this.#continue(flags, streamId, payload);
        return;
      }
      case FrameType.PRIORITY:
        if (streamId === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "PRIORITY on stream 0");
        if (payload.length !== 5) this.#streamError(streamId, ErrorCode.FRAME_SIZE_ERROR);
        return;
      case FrameType.RST_STREAM: {
        this.#rstStream(streamId, payload);
        return;
      }
      case FrameType.SETTINGS: {
        this.#settings(flags, streamId, payload);
        return;
      }
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "PUSH_PROMISE from a client");
      case FrameType.PING:
        if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "PING on a stream");
        if (payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "PING not 8 bytes");
        if (!(flags & Flag.ACK)) this.#send(frame(FrameType.PING, Flag.ACK, 0, payload));
        return;
      case FrameType.GOAWAY:
        if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "GOAWAY on a stream");
        this.#goingAway = true;
        this.#endIfIdle();
        return;
      case FrameType.WINDOW_UPDATE: {
        this.#windowUpdate(streamId, payload);
        return;
      }
      default:
        return; // unknown frame types are ignored (RFC 9113 4.1)
    }
  }

  #settings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "SETTINGS on a stream");
    if (flags & Flag.ACK) {
      if (payload.length !== 0)
        throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS ACK with a payload");
      return;
    }
    if (payload.length % 6 !== 0)
      throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS not in 6-byte entries");
    this.#settingsSeen = true;
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === Setting.ENABLE_PUSH && value > 1)
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "ENABLE_PUSH not 0 or 1");
      if (id === Setting.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW)
          throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "INITIAL_WINDOW_SIZE too large");
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const stream of this.#streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW)
            throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "a stream window past 2^31-1");
          if (delta > 0 && stream.queuedBytes > 0) this.schedule(stream);
        }
      }
      if (id === Setting.MAX_FRAME_SIZE) {
        if (value < MIN_FRAME_SIZE || value > MAX_FRAME_SIZE)
          throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "MAX_FRAME_SIZE out of range");
        this.#peerMaxFrame = value;
      }
    }
    this.#send(frame(FrameType.SETTINGS, Flag.ACK, 0));
  }

  #headers(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0 || streamId % 2 === 0)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `HEADERS on stream ${streamId}`);
    const block = unpadded(payload, flags, true);
    if (block === undefined) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "HEADERS padding too long");
    if (flags & Flag.END_HEADERS) {
      this.#headerBlock(streamId, flags, block);
      return;
    }
    this.#continuation = { streamId, flags, fragments: [Buffer.from(block)], bytes: block.length };
  }

  #continue(flags: number, streamId: number, payload: Buffer): void {
    const continuation = this.#continuation;
    if (!continuation) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "CONTINUATION without HEADERS");
    continuation.fragments.push(Buffer.from(payload));
    continuation.bytes += payload.length;
    // An endless header block is refused before it is decoded (a CONTINUATION flood).
    if (continuation.bytes > this.#maxHeaderListBytes * 2)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "header block too large");
    if (!(flags & Flag.END_HEADERS)) return;
    this.#continuation = undefined;
    this.#headerBlock(streamId, continuation.flags, Buffer.concat(continuation.fragments));
  }

  #headerBlock(streamId: number, flags: number, block: Buffer): void {
    // Decoded whatever becomes of the stream: the decoder's table must see every block.
    let fields: HeaderList | undefined;
    try {
      fields = this.#decoder.decode(block, this.#maxHeaderListBytes);
    } catch (err) {
      if (!(err instanceof HeaderListTooLarge))
        throw new ConnectionError(ErrorCode.COMPRESSION_ERROR, (err as Error).message);
    }
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if (streamId <= this.#lastStreamId) {
      const stream = this.#find(streamId);
      // A stream closed here may still get what the peer sent before it learnt so: ignored.
      if (stream === undefined) return;
      if (stream.remoteEnded) {
        this.#streamError(streamId, ErrorCode.STREAM_CLOSED);
        return;
      }
      // Trailers from the client: they must end the stream.
      if (!endStream) {
        this.#streamError(streamId, ErrorCode.PROTOCOL_ERROR);
        return;
      }
      this.#remoteEnd(stream);
      return;
    }
    this.#lastStreamId = streamId;
    if (this.#goingAway) {
      this.#streamError(streamId, ErrorCode.REFUSED_STREAM);
      return;
    }
    if (fields === undefined || !validRequest(fields)) {
      this.#streamError(streamId, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    const stream = new H2ServerStream(streamId, this, this.#peerInitialWindow, this.#receiveWindow);
    stream.slot = this.#streams.add(stream);
    this.#guarded(stream, () => this.#onStream(stream, fields));
    if (endStream && !stream.closed) this.#remoteEnd(stream);
  }

  #data(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "DATA on stream 0");
    // The connection's window counts every DATA frame, whatever becomes of its stream.
    this.#unacknowledged += payload.length;
    if (this.#unacknowledged > this.#receiveWindow)
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "DATA past the connection's window");
    if (this.#unacknowledged >= this.#receiveWindow / 2) {
      this.#send(windowUpdateFrame(0, this.#unacknowledged));
      this.#unacknowledged = 0;
    }
    if (streamId > this.#lastStreamId)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "DATA on an idle stream");
    const stream = this.#find(streamId);
    if (stream === undefined) return; // closed here; see #headerBlock
    if (stream.remoteEnded) {
      this.#streamError(streamId, ErrorCode.STREAM_CLOSED);
      return;
    }
    stream.receiveWindow -= payload.length;
    if (stream.receiveWindow < 0) {
      this.#streamError(streamId, ErrorCode.FLOW_CONTROL_ERROR);
      return;
    }
    const data = unpadded(payload, flags, false);
    if (data === undefined) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "DATA padding too long");
    const endStream = (flags & Flag.END_STREAM) !== 0;
    // Given back at once (the data is handed on, not held here), in updates of at least half the window.
    stream.unacknowledged += payload.length;
    if (!endStream && stream.unacknowledged >= this.#receiveWindow / 2) {
      this.#send(windowUpdateFrame(streamId, stream.unacknowledged));
      stream.receiveWindow += stream.unacknowledged;
      stream.unacknowledged = 0;
    }
    // A copy: a view would keep the socket's whole read buffer for as long as the request is held.
    if (data.length > 0) this.#guarded(stream, () => stream.emit("data", Buffer.from(data)));
    if (endStream && !stream.closed) this.#remoteEnd(stream);
  }

  #rstStream(streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "RST_STREAM on stream 0");
    if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "RST_STREAM not 4 bytes");
    if (streamId > this.#lastStreamId)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "RST_STREAM on an idle stream");
    const stream = this.#find(streamId);
    if (stream) this.#closeStream(stream, payload.readUInt32BE(0), false);
  }

  #windowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4)
      throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "WINDOW_UPDATE not 4 bytes");
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) {
      if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0");
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW)
        throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "window past 2^31-1");
      if (this.#sendable.length > 0) this.#queueFlush();
      return;
    }
    const stream = this.#find(streamId);
    if (stream === undefined) return;
    if (increment === 0) {
      this.#streamError(streamId, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) {
      this.#streamError(streamId, ErrorCode.FLOW_CONTROL_ERROR);
      return;
    }
    if (stream.queuedBytes > 0 || stream.ending) this.schedule(stream);
  }

  // Streams

  #find(streamId: number): H2ServerStream | undefined {
    // A connection's open streams are few: a walk through the slots, not a Map that would keep what
    // it held (slot-table.ts).
    return this.#streams.find((stream) => stream.id === streamId);
  }

  #remoteEnd(stream: H2ServerStream): void {
    stream.remoteEnded = true;
    this.#guarded(stream, () => stream.emit("end"));
    if (stream.closed) return;
    if (stream.localEnded) this.#closeStream(stream, ErrorCode.NO_ERROR, false);
  }

  /** Runs `fn` (a handler, a listener); if it throws and onError is set, only its stream is reset. */
  #guarded(stream: H2ServerStream, fn: () => void): void {
    if (!this.#onError) {
      fn();
      return;
    }
    try {
      fn();
    } catch (err) {
      this.#onError(err);
      this.#closeStream(stream, ErrorCode.INTERNAL_ERROR, true);
    }
  }

  #localEnd(stream: H2ServerStream): void {
    stream.localEnded = true;
    // The response is complete: a request still being sent is not wanted (RFC 9113 8.1).
    this.#closeStream(stream, ErrorCode.NO_ERROR, !stream.remoteEnded);
  }

  /** Ends a stream: with RST_STREAM `code` when `reset`; 'close' follows on the next tick. */
  #closeStream(stream: H2ServerStream, code: number, reset: boolean): void {
    if (stream.closed) return;
    stream.closed = true;
    if (this.#streams.get(stream.slot) === stream) this.#streams.delete(stream.slot);
    stream.queue.clear();
    stream.queueOffset = 0;
    stream.queuedBytes = 0;
    if (reset && !this.#done) {
      this.#send(rstStreamFrame(stream.id, code));
      this.#queueFlush();
    }
    process.nextTick(emitClose, stream, code);
    this.#endIfIdle();
  }

  /** A stream error: RST_STREAM, and the stream (if open) closes. */
  #streamError(streamId: number, code: number): void {
    const stream = this.#find(streamId);
    if (stream) this.#closeStream(stream, code, true);
    else this.#send(rstStreamFrame(streamId, code));
  }

  #connectionError(code: number): void {
    if (this.#done) return;
    this.#send(goawayFrame(this.#lastStreamId, code));
    this.#flush();
    this.#socket.end();
    this.#finish();
  }

  #endIfIdle(): void {
    if (this.#goingAway && this.#streams.size === 0 && !this.#done) {
      this.#flush();
      this.#socket.end();
    }
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    for (const stream of this.#streams.values()) this.#closeStream(stream, ErrorCode.CANCEL, false);
    this.#sendable.length = 0;
    this.#resolveDone();
  }

  // Writing

  /** HEADERS, and CONTINUATION frames when the block is larger than the peer's frame size. */
  #headerFrames(streamId: number, fields: readonly string[], endStream: boolean): void {
    const block = encodeHeaders(fields);
    const max = this.#peerMaxFrame;
    let at = 0;
    let first = true;
    do {
      const end = Math.min(block.length, at + max);
      let flags = end === block.length ? Flag.END_HEADERS : 0;
      if (first && endStream) flags |= Flag.END_STREAM;
      this.#send(
        frame(first ? FrameType.HEADERS : FrameType.CONTINUATION, flags, streamId, block.subarray(at, end)),
      );
      first = false;
      at = end;
    } while (at < block.length);
    this.#queueFlush();
  }

  /** Sends what the streams have queued, as far as the windows allow, then their ends. */
  #pump(): void {
    const sendable = this.#sendable;
    let kept = 0;
    for (let i = 0; i < sendable.length; i++) {
      const stream = sendable[i]!;
      if (!this.#pumpStream(stream)) sendable[kept++] = stream;
      else stream.scheduled = false;
    }
    sendable.length = kept;
  }

  /** True once the stream has nothing more to send for now. */
  #pumpStream(stream: H2ServerStream): boolean {
    if (stream.closed || stream.localEnded) return true;
    while (stream.queue.length > 0) {
      const room = Math.min(stream.sendWindow, this.#sendWindow, this.#peerMaxFrame);
      if (room <= 0) return stream.sendWindow <= 0; // waits for the stream's window (done for now), or the connection's
      const chunk = stream.queue.peekFront()!;
      const n = Math.min(room, chunk.byteLength - stream.queueOffset);
      this.#out(chunk, stream.queueOffset, stream.queueOffset + n, stream.id);
      stream.sendWindow -= n;
      this.#sendWindow -= n;
      stream.queuedBytes -= n;
      stream.queueOffset += n;
      if (stream.queueOffset === chunk.byteLength) {
        stream.queue.shift();
        stream.queueOffset = 0;
      }
    }
    if (!stream.ending) return true;
    if (stream.waitForTrailers && !stream.trailers) {
      // Asked once; sendTrailers schedules the stream again. Until then nothing ends it, whatever else
      // (a window update) schedules it meanwhile.
      if (!stream.trailersAsked) {
        stream.trailersAsked = true;
        stream.emit("wantTrailers");
      }
      if (stream.closed || stream.localEnded || !stream.trailers) return true;
    }
    if (stream.trailers) this.#headerFrames(stream.id, stream.trailers, true);
    else {
      const end = frame(FrameType.DATA, Flag.END_STREAM, stream.id);
      this.#out(end, 0, end.byteLength, -1);
    }
    this.#localEnd(stream);
    return true;
  }

  #send(bytes: Uint8Array): void {
    this.#out(bytes, 0, bytes.byteLength, -1);
    this.#queueFlush();
  }

  /** Adds bytes[start, end) to the next write, after a DATA frame header when `dataStream` >= 0. */
  #out(bytes: Uint8Array, start: number, end: number, dataStream: number): void {
    const i = this.#outCount++;
    this.#outBytes[i] = bytes;
    this.#outStart[i] = start;
    this.#outEnd[i] = end;
    this.#outDataStream[i] = dataStream;
    this.#outLength += end - start + (dataStream >= 0 ? FRAME_HEADER_BYTES : 0);
  }

  #queueFlush(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    process.nextTick(flushConnection, this);
  }

  /** Writes what is waiting in one write. */
  flush(): void {
    this.#flush();
  }

  #flush(): void {
    this.#flushQueued = false;
    if (this.#sendable.length > 0) this.#pump();
    const count = this.#outCount;
    if (count === 0) return;
    const bytes = this.#outBytes;
    const write = this.#socket.destroyed || this.#socket.writableEnded ? undefined : this.#written(count);
    for (let i = 0; i < count; i++) bytes[i] = undefined;
    this.#outCount = 0;
    this.#outLength = 0;
    if (write) this.#socket.write(write);
  }

  /** The next write: its `count` entries in one buffer (the one entry itself when it is whole bytes). */
  #written(count: number): Uint8Array {
    const bytes = this.#outBytes;
    const first = bytes[0]!;
    if (
      count === 1 &&
      this.#outDataStream[0] === -1 &&
      this.#outStart[0] === 0 &&
      this.#outEnd[0] === first.byteLength
    )
      return first;
    const out = Buffer.allocUnsafe(this.#outLength);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const chunk = bytes[i]!;
      const start = this.#outStart[i]!;
      const end = this.#outEnd[i]!;
      const stream = this.#outDataStream[i]!;
      if (stream >= 0) {
        writeFrameHeader(out, at, end - start, FrameType.DATA, 0, stream);
        at += FRAME_HEADER_BYTES;
      }
      // A whole chunk is copied as it is; only a part cut by a window takes a view.
      out.set(start === 0 && end === chunk.byteLength ? chunk : chunk.subarray(start, end), at);
      at += end - start;
    }
    return out;
  }
}

function flushConnection(connection: H2Connection): void {
  connection.flush();
}

function emitClose(stream: H2ServerStream, code: number): void {
  stream.emit("close", code);
}

/** A request's header list has what RFC 9113 8.3.1 requires of a non-CONNECT request. */
function validRequest(fields: HeaderList): boolean {
  let method = false;
  let path = false;
  let scheme = false;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    if (name === ":method") method = true;
    else if (name === ":path") path = fields[i + 1] !== "";
    else if (name === ":scheme") scheme = true;
    else if (name !== ":authority" && name.startsWith(":")) return false;
    else if (name === "connection" || (name === "te" && fields[i + 1] !== "trailers")) return false;
  }
  return method && path && scheme;
}

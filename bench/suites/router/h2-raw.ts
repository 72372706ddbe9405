// The `raw` mode of h2-retention.ts (issue 22; a probe, not a suite): the same load as its node:http2
// server and client, served by a minimal HTTP/2 server written on node:net, to see whether a server
// that keeps a stream only in an array slot promotes what node:http2's streams do. Only what the
// probe's own client sends is understood: HPACK without Huffman or dynamic table entries, windows
// opened wide at the start (no flow control after), no priorities or padding. Not a server for use.
import net from "node:net";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const DATA = 0x0;
const HEADERS = 0x1;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;
const WIDE_WINDOW = 2 ** 31 - 1;

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(stream, 5);
  payload.copy(out, 9);
  return out;
}

/** SETTINGS with INITIAL_WINDOW_SIZE wide open, and the connection window opened as wide. */
function openWindows(): Buffer {
  const settings = Buffer.alloc(6);
  settings.writeUInt16BE(0x4, 0);
  settings.writeUInt32BE(WIDE_WINDOW, 2);
  const increment = Buffer.alloc(4);
  increment.writeUInt32BE(WIDE_WINDOW - 65_535, 0);
  return Buffer.concat([frame(SETTINGS, 0, 0, settings), frame(0x8, 0, 0, increment)]);
}

/** A header field as a literal without indexing and a new name, no Huffman (names and values < 127 bytes). */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x00, name.length]),
    Buffer.from(name, "latin1"),
    Buffer.from([value.length]),
    Buffer.from(value, "latin1"),
  ]);
}

const STATIC: Record<number, [string, string]> = {
  3: [":method", "POST"],
  6: [":scheme", "http"],
  8: [":status", "200"],
};

/** Decodes what `literal` and static indexed fields encode, into a header object as a server would. */
function decodeBlock(block: Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  let at = 0;
  while (at < block.length) {
    const first = block[at++]!;
    if (first & 0x80) {
      const field = STATIC[first & 0x7f];
      if (!field) throw new Error(`static index ${first & 0x7f} not known to this probe`);
      headers[field[0]] = field[1];
      continue;
    }
    if (first !== 0x00)
      throw new Error(`header representation 0x${first.toString(16)} not known to this probe`);
    const nameLength = block[at++]!;
    const name = block.toString("latin1", at, at + nameLength);
    at += nameLength;
    const valueLength = block[at++]!;
    headers[name] = block.toString("latin1", at, at + valueLength);
    at += valueLength;
  }
  return headers;
}

/** Calls `onFrame` for each whole frame read from the socket, after the client preface on a server. */
function readFrames(
  socket: net.Socket,
  expectPreface: boolean,
  onFrame: (type: number, flags: number, stream: number, payload: Buffer) => void,
): void {
  let pending: Buffer = Buffer.alloc(0);
  let prefaceLeft = expectPreface ? PREFACE.length : 0;
  socket.on("data", (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    if (prefaceLeft) {
      if (pending.length < prefaceLeft) return;
      if (!pending.subarray(0, PREFACE.length).equals(PREFACE)) throw new Error("no HTTP/2 preface");
      pending = pending.subarray(prefaceLeft);
      prefaceLeft = 0;
    }
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      onFrame(
        pending[3]!,
        pending[4]!,
        pending.readUInt32BE(5) & 0x7fffffff,
        pending.subarray(9, 9 + length),
      );
      pending = pending.subarray(9 + length);
    }
  });
}

interface RawStream {
  id: number;
  headers: Record<string, string>;
  received: Buffer[];
}

/** Serves each stream as h2-retention's node:http2 server does: 32 DATA frames 5 ms apart, then trailers. */
export function rawServer(): net.Server {
  const responseHeaders = Buffer.concat([Buffer.from([0x88]), literal("content-type", "application/grpc")]);
  const trailers = literal("grpc-status", "0");
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on("error", () => {});
    socket.write(openWindows());
    // Streams by id in array slots, emptied when done (a Map would keep them: h2-retention `aged-map`).
    const streams: (RawStream | undefined)[] = new Array(4096).fill(undefined);
    const slot = (id: number) => (id >>> 1) & 4095;
    readFrames(socket, true, (type, flags, id, payload) => {
      if (type === SETTINGS && !(flags & ACK)) socket.write(frame(SETTINGS, ACK, 0, Buffer.alloc(0)));
      else if (type === PING && !(flags & ACK)) socket.write(frame(PING, ACK, 0, Buffer.from(payload)));
      else if (type === GOAWAY) socket.end();
      else if (type === HEADERS) {
        if (!(flags & END_HEADERS)) throw new Error("CONTINUATION not known to this probe");
        streams[slot(id)] = { id, headers: decodeBlock(payload), received: [] };
      } else if (type === DATA) {
        const stream = streams[slot(id)];
        if (stream?.id !== id) return;
        stream.received.push(Buffer.from(payload));
        if (flags & END_STREAM) respond(stream);
      }
    });
    const respond = (stream: RawStream) => {
      socket.write(frame(HEADERS, END_HEADERS, stream.id, responseHeaders));
      let n = 0;
      const timer = setInterval(() => {
        socket.write(frame(DATA, 0, stream.id, Buffer.allocUnsafe(20).fill(n)));
        if (++n < 32) return;
        clearInterval(timer);
        socket.write(frame(HEADERS, END_HEADERS | END_STREAM, stream.id, trailers));
        if (streams[slot(stream.id)] === stream) streams[slot(stream.id)] = undefined;
      }, 5);
    };
  });
}

/** Keeps `concurrency` streams going against the raw server until `end`, then calls `done`. */
export function rawClient(
  port: number,
  concurrency: number,
  end: number,
  done: (streams: number) => void,
): void {
  const socket = net.connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  const request = Buffer.concat([
    Buffer.from([0x83, 0x86]),
    literal(":path", "/x"),
    literal(":authority", `127.0.0.1:${port}`),
    literal("content-type", "application/grpc"),
  ]);
  let nextId = 1;
  let live = concurrency;
  let completed = 0;
  const one = () => {
    if (Date.now() > end) {
      if (--live === 0) {
        socket.end(frame(GOAWAY, 0, 0, Buffer.alloc(8)));
        done(completed);
      }
      return;
    }
    const id = nextId;
    nextId += 2;
    socket.write(
      Buffer.concat([
        frame(HEADERS, END_HEADERS, id, request),
        frame(DATA, END_STREAM, id, Buffer.alloc(30)),
      ]),
    );
  };
  socket.on("connect", () => {
    socket.write(Buffer.concat([PREFACE, openWindows()]));
    for (let i = 0; i < concurrency; i++) one();
  });
  socket.on("error", () => {});
  readFrames(socket, false, (type, flags, _id, payload) => {
    if (type === SETTINGS && !(flags & ACK)) socket.write(frame(SETTINGS, ACK, 0, Buffer.alloc(0)));
    else if (type === PING && !(flags & ACK)) socket.write(frame(PING, ACK, 0, Buffer.from(payload)));
    else if (type === HEADERS && flags & END_STREAM) {
      completed++;
      one();
    }
  });
}

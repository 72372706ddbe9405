// Hands a stream of our HTTP/2 front door (h2-front-door.ts) to another HTTP/2 server, frame for
// frame: the request's headers and DATA go to it over one node:http2 client session, its response
// headers, DATA and trailers come back, and a reset either way resets the other side. The front door
// serves the router's hot method itself and passes the rest (health, ListModels, Tokenize,
// reflection) to the grpc-js server behind it, which keeps their semantics.
import http2 from "node:http2";
import type { H2ServerStream } from "./h2-server-stream.ts";

/** Request headers that belong to one hop (RFC 9113 8.2.2), and the pseudo-headers node:http2 sets itself. */
const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

export class H2Proxy {
  readonly #authority: string;
  #session: http2.ClientHttp2Session | undefined;

  /** `authority`: the server's URL, e.g. http://127.0.0.1:50051. */
  constructor(authority: string) {
    this.#authority = authority;
  }

  /** Passes `stream` (its `headers` as received, repeated names as arrays) on, until either side ends it. */
  forward(stream: H2ServerStream, headers: http2.IncomingHttpHeaders): void {
    const outgoing: http2.OutgoingHttpHeaders = {};
    for (const name in headers) if (!HOP_HEADERS.has(name)) outgoing[name] = headers[name];
    let request: http2.ClientHttp2Stream;
    try {
      request = this.#connected().request(outgoing, { endStream: false });
    } catch {
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    let answered = false;
    let trailers: http2.IncomingHttpHeaders | undefined;
    stream.on("data", (chunk: Buffer) => request.write(chunk));
    stream.on("end", () => request.end());
    stream.on("close", () => {
      if (!request.closed) request.close(http2.constants.NGHTTP2_CANCEL);
    });
    request.on("response", (response, flags) => {
      answered = true;
      const endStream = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
      stream.respond(response, endStream ? { endStream: true } : { waitForTrailers: true });
    });
    request.on("data", (chunk: Buffer) => stream.write(chunk));
    request.on("trailers", (received) => {
      trailers = received;
    });
    request.on("end", () => {
      if (stream.closed || !answered) return;
      stream.once("wantTrailers", () => stream.sendTrailers(trailers ?? {}));
      stream.end();
    });
    request.on("error", () => {});
    request.on("close", () => {
      if (stream.closed) return;
      if (!answered || request.rstCode !== http2.constants.NGHTTP2_NO_ERROR)
        stream.close(request.rstCode || http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
  }

  close(): void {
    this.#session?.close();
    this.#session = undefined;
  }

  #connected(): http2.ClientHttp2Session {
    const current = this.#session;
    if (current && !current.closed && !current.destroyed) return current;
    const session = http2.connect(this.#authority);
    session.on("error", () => {});
    session.on("close", () => {
      if (this.#session === session) this.#session = undefined;
    });
    this.#session = session;
    return session;
  }
}

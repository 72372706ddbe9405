import assert from "node:assert/strict";
import { once } from "node:events";
import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import { H2Connection } from "./h2-connection.ts";
import type { H2ServerStream } from "./h2-server-stream.ts";
import type { HeaderList } from "./hpack.ts";

type Handler = (stream: H2ServerStream, headers: HeaderList) => void;

/** A net server whose connections are H2Connections calling `handler`; node:http2 is the client. */
async function serve(
  handler: Handler,
  onError?: (err: unknown) => void,
): Promise<{ url: string; connections: H2Connection[]; close(): void }> {
  const connections: H2Connection[] = [];
  const server = net.createServer((socket) =>
    connections.push(new H2Connection(socket, { onStream: handler, ...(onError && { onError }) })),
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () => {
      for (const c of connections) c.destroy();
      server.close();
    },
  };
}

function header(headers: HeaderList, name: string): string | undefined {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
}

/** Reads a client request whole: response headers, body, trailers, and how the stream closed. */
async function exchange(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body: Buffer | undefined,
): Promise<{
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
  trailers: http2.IncomingHttpHeaders;
  rstCode: number;
}> {
  const request = session.request({ ":method": "POST", ":path": "/echo", ...headers });
  let response: http2.IncomingHttpHeaders = {};
  let trailers: http2.IncomingHttpHeaders = {};
  const chunks: Buffer[] = [];
  request.on("response", (h) => {
    response = h;
  });
  request.on("trailers", (t) => {
    trailers = t;
  });
  request.on("data", (c: Buffer) => chunks.push(c));
  request.on("error", () => {});
  request.end(body);
  // Not events.once: it rejects on the 'error' that a reset stream emits before 'close'.
  await new Promise((resolve) => request.on("close", resolve));
  return { headers: response, body: Buffer.concat(chunks), trailers, rstCode: request.rstCode ?? 0 };
}

/** Answers each request with its own body back, in `pieces` writes, then trailers naming its length. */
function echo(pieces = 1): Handler {
  return (stream) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const body = Buffer.concat(chunks);
      stream.respond([":status", "200", "content-type", "application/octet-stream"], {
        waitForTrailers: true,
      });
      const size = Math.ceil(body.length / pieces);
      for (let at = 0; at < body.length; at += size) stream.write(body.subarray(at, at + size));
      stream.once("wantTrailers", () => stream.sendTrailers({ "x-length": String(body.length) }));
      stream.end();
    });
  };
}

describe("H2Connection (node:http2 as the client)", () => {
  it("reads a request and sends headers, data and trailers", async () => {
    const server = await serve(echo(3));
    const session = http2.connect(server.url);
    try {
      const result = await exchange(session, { "x-custom": "yes" }, Buffer.from("hello, stream"));
      assert.equal(result.headers[":status"], 200);
      assert.equal(result.headers["content-type"], "application/octet-stream");
      assert.equal(result.body.toString(), "hello, stream");
      assert.equal(result.trailers["x-length"], "13");
      assert.equal(result.rstCode, 0);
    } finally {
      session.close();
      server.close();
    }
  });

  it("decodes the client's HPACK (Huffman, dynamic table) across many streams", async () => {
    const seen: string[] = [];
    const server = await serve((stream, headers) => {
      seen.push(`${header(headers, ":path")} ${header(headers, "user-agent")} ${header(headers, "x-n")}`);
      stream.on("end", () => stream.respond([":status", "200"], { endStream: true }));
    });
    const session = http2.connect(server.url);
    try {
      for (let n = 0; n < 5; n++)
        await exchange(
          session,
          { ":path": "/same/path/again", "user-agent": "tessera-test/1.0", "x-n": String(n) },
          undefined,
        );
      assert.deepEqual(
        seen,
        [0, 1, 2, 3, 4].map((n) => `/same/path/again tessera-test/1.0 ${n}`),
      );
    } finally {
      session.close();
      server.close();
    }
  });

  it("runs 64 concurrent streams, each with its own data", async () => {
    const server = await serve(echo(8));
    const session = http2.connect(server.url);
    try {
      const bodies = Array.from({ length: 64 }, (_, i) => Buffer.alloc(1000 + i * 37, i));
      const results = await Promise.all(bodies.map((b) => exchange(session, {}, b)));
      results.forEach((r, i) => {
        assert.ok(r.body.equals(bodies[i]!), `stream ${i}`);
        assert.equal(r.trailers["x-length"], String(bodies[i]!.length));
      });
      assert.equal(server.connections[0]!.streams, 0);
    } finally {
      session.close();
      server.close();
    }
  });

  it("keeps to the client's small windows and gives back its own (bodies over 64 KiB both ways)", async () => {
    const server = await serve(echo(5));
    const session = http2.connect(server.url, { settings: { initialWindowSize: 1024 } });
    try {
      const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 251));
      const [a, b] = await Promise.all([
        exchange(session, {}, body),
        exchange(session, {}, body.subarray(7)),
      ]);
      assert.ok(a.body.equals(body));
      assert.ok(b.body.equals(body.subarray(7)));
    } finally {
      session.close();
      server.close();
    }
  });

  it("waits for trailers given later, whatever window updates come in meanwhile", async () => {
    const server = await serve((stream) => {
      stream.on("end", () => {
        stream.respond([":status", "200"], { waitForTrailers: true });
        for (let i = 0; i < 8; i++) stream.write(Buffer.alloc(1000, i));
        stream.once("wantTrailers", () => setTimeout(() => stream.sendTrailers({ "x-late": "yes" }), 100));
        stream.end();
      });
    });
    const session = http2.connect(server.url, { settings: { initialWindowSize: 1024 } });
    try {
      const result = await exchange(session, {}, undefined);
      assert.equal(result.body.length, 8000);
      assert.equal(result.trailers["x-late"], "yes");
    } finally {
      session.close();
      server.close();
    }
  });

  it("sends a header block larger than a frame as HEADERS and CONTINUATION", async () => {
    const big = "v".repeat(40_000);
    const server = await serve((stream) => {
      stream.on("end", () => stream.respond([":status", "200", "x-big", big], { endStream: true }));
    });
    const session = http2.connect(server.url, {
      maxHeaderListPairs: 10,
      settings: { maxHeaderListSize: 100_000 },
    });
    try {
      const result = await exchange(session, {}, undefined);
      assert.equal(result.headers["x-big"], big);
    } finally {
      session.close();
      server.close();
    }
  });

  it("closes a stream the client resets, with its code, and sends nothing more on it", async () => {
    let closed: ((code: number) => void) | undefined;
    const closedCode = new Promise<number>((resolve) => {
      closed = resolve;
    });
    let serverStream: H2ServerStream | undefined;
    const server = await serve((stream) => {
      serverStream = stream;
      stream.respond([":status", "200"], { waitForTrailers: true });
      stream.write(Buffer.from("first"));
      stream.on("close", (code: number) => closed?.(code));
    });
    const session = http2.connect(server.url);
    try {
      const request = session.request({ ":method": "POST", ":path": "/slow" });
      request.on("error", () => {});
      await once(request, "data");
      request.close(http2.constants.NGHTTP2_CANCEL);
      assert.equal(await closedCode, http2.constants.NGHTTP2_CANCEL);
      assert.equal(serverStream!.closed, true);
      assert.equal(serverStream!.write(Buffer.from("late")), false);
      assert.equal(server.connections[0]!.streams, 0);
      // The connection still serves.
      const next = session.request({ ":method": "POST", ":path": "/slow" });
      next.on("error", () => {});
      const [chunk] = (await once(next, "data")) as [Buffer];
      assert.equal(chunk.toString(), "first");
      next.close(http2.constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
      server.close();
    }
  });

  it("answers a response sent before the request ended with RST_STREAM NO_ERROR after it", async () => {
    const server = await serve((stream) => {
      stream.respond([":status", "200", "grpc-status", "8"], { endStream: true });
    });
    const session = http2.connect(server.url);
    try {
      const request = session.request({ ":method": "POST", ":path": "/early" });
      request.on("error", () => {});
      request.write(Buffer.alloc(100));
      const [headers] = (await once(request, "response")) as [http2.IncomingHttpHeaders];
      assert.equal(headers["grpc-status"], "8");
      await once(request, "close");
      assert.equal(request.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      session.close();
      server.close();
    }
  });

  it("goes away gracefully: the open stream finishes, then the connection ends", async () => {
    let finish: (() => void) | undefined;
    const server = await serve((stream) => {
      stream.on("end", () => {
        stream.respond([":status", "200"], { waitForTrailers: true });
        finish = () => {
          stream.write(Buffer.from("done"));
          stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
          stream.end();
        };
      });
    });
    const session = http2.connect(server.url);
    session.on("error", () => {});
    try {
      const pending = exchange(session, {}, Buffer.from("x"));
      while (!finish) await new Promise((r) => setTimeout(r, 5));
      const connection = server.connections[0]!;
      const goaway = once(session, "goaway");
      connection.goAway();
      await goaway;
      finish();
      const result = await pending;
      assert.equal(result.body.toString(), "done");
      assert.equal(result.trailers["grpc-status"], "0");
      await connection.done;
    } finally {
      session.destroy();
      server.close();
    }
  });

  it("resets only the stream whose handler threw, and goes on serving (onError)", async () => {
    const errors: unknown[] = [];
    const answer = echo();
    const server = await serve(
      (stream, headers) => {
        if (header(headers, ":path") === "/boom") throw new Error("handler bug");
        answer(stream, headers);
      },
      (err) => errors.push(err),
    );
    const session = http2.connect(server.url);
    try {
      const failed = await exchange(session, { ":path": "/boom" }, Buffer.from("x"));
      assert.equal(failed.rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR);
      assert.equal((errors[0] as Error).message, "handler bug");
      const ok = await exchange(session, {}, Buffer.from("still here"));
      assert.equal(ok.body.toString(), "still here");
    } finally {
      session.close();
      server.close();
    }
  });

  it("ends a connection that does not start with the HTTP/2 preface", async () => {
    const server = await serve(echo());
    try {
      const socket = net.connect(Number(new URL(server.url).port), "127.0.0.1");
      await once(socket, "connect");
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
      const chunks: Buffer[] = [];
      socket.on("data", (c: Buffer) => chunks.push(c));
      await once(socket, "end");
      const bytes = Buffer.concat(chunks);
      // SETTINGS first, then GOAWAY with PROTOCOL_ERROR.
      const goaway = bytes.indexOf(Buffer.from([0x00, 0x00, 0x08, 0x07]));
      assert.ok(goaway >= 0, "a GOAWAY frame");
      assert.equal(bytes.readUInt32BE(goaway + 9 + 4), 0x1);
      socket.destroy();
    } finally {
      server.close();
    }
  });
});

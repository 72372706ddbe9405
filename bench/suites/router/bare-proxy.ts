// The least a second process between client and worker can do: a pass-through HTTP/2 proxy on
// node:http2 that forwards each gRPC call's bytes to one worker and its response frames and all its
// trailers back, without parsing a message, choosing an endpoint or keeping any state. The overhead
// benchmark runs it beside the router, in the same rounds, so the figures show what one extra hop
// costs on this machine before any routing work.
// Usage: node bare-proxy.ts <worker host:port>; logs {"msg":"proxying","port"} once listening.
import http2 from "node:http2";
import net from "node:net";

const [host, port] = (process.argv[2] ?? "").split(":");
if (!host || !port) throw new Error("usage: bare-proxy.ts <worker host:port>");

const upstream = http2.connect(`http://${host}:${port}`, {
  createConnection: () => net.connect({ host, port: Number(port), noDelay: true }),
});
const server = http2.createServer();
server.on("connection", (socket: net.Socket) => socket.setNoDelay(true));
server.on("stream", (stream, headers) => {
  const call = upstream.request({
    ":method": "POST",
    ":path": headers[":path"] ?? "/",
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.pipe(call);
  let trailers: http2.IncomingHttpHeaders = { "grpc-status": "14", "grpc-message": "upstream ended" };
  call.on("response", (received) => {
    if (received["grpc-status"] !== undefined) trailers = received; // a trailers-only response
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  });
  call.on("trailers", (received) => {
    trailers = received;
  });
  call.on("data", (chunk: Buffer) => stream.write(chunk));
  call.on("end", () => stream.end());
  call.on("error", () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  // The worker's trailers as they came (its status, and the server-timing the benchmark reads).
  stream.on("wantTrailers", () =>
    stream.sendTrailers({
      ...trailers,
      "grpc-status": trailers["grpc-status"] ?? "0",
      "grpc-message": trailers["grpc-message"] ?? "",
    }),
  );
  stream.on("close", () => call.close());
});
server.listen(0, "127.0.0.1", () => {
  const { port: listening } = server.address() as net.AddressInfo;
  console.error(JSON.stringify({ msg: "proxying", port: listening }));
});

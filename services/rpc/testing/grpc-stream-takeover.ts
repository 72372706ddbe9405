// For specs: Http2ServerCall over node:http2's server streams (the router's front door serves it on its
// own, rpc/h2/). Serves chosen methods of a grpc-js Server on their HTTP/2 streams directly,
// on the same port, sessions and TLS as the rest: grpc-js keeps accepting connections, answering the
// other methods, enforcing its session options and closing sessions at shutdown; only the 'stream'
// events of the named paths go elsewhere. grpc-js has no public hook for that, so this reaches its
// HTTP/2 servers (the private `http2Servers` map, grpc-js 1.10 to 1.14) and fails loudly when they
// are not where they were, rather than leaving the methods unserved.
import type { Http2SecureServer, Http2Server, IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { Server } from "@grpc/grpc-js";
import { isGrpcCall } from "../http2-server-call.ts";

/**
 * Takes one stream of its path; `path` is the handler's own string (the stream's :path is an external
 * string node:http2 made of the received header, which a handler keeping it would hold on to).
 */
export type StreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, path: string) => void;
type StreamListener = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => void;

/** Routes the streams of `handlers`' paths (e.g. `/tessera.v1.Inference/Generate`) of a bound server. */
export function takeOverStreams(server: Server, handlers: ReadonlyMap<string, StreamHandler>): void {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0)
    throw new Error("grpc-js keeps its HTTP/2 servers elsewhere than this version of Tessera expects");
  const byPath = new Map([...handlers].map(([path, handler]) => [path, { path, handler }] as const));
  for (const http2 of servers.keys() as Iterable<Http2Server | Http2SecureServer>) {
    const listeners = http2.listeners("stream") as StreamListener[];
    if (listeners.length !== 1)
      throw new Error(`grpc-js's HTTP/2 server has ${listeners.length} stream listeners, not 1`);
    const grpcJs = listeners[0]!;
    http2.removeListener("stream", grpcJs);
    http2.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
      const taken = byPath.get(headers[":path"] ?? "");
      // A stream that is not a gRPC call (or not POST) gets grpc-js's answer.
      if (taken && headers[":method"] === "POST" && isGrpcCall(headers))
        taken.handler(stream, headers, taken.path);
      else grpcJs.call(http2, stream, headers, ...rest);
    });
  }
}

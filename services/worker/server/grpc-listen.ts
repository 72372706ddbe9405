// What every Tessera gRPC server does to go live: listen on host:port (IPv6 hosts bracketed), and give
// grpc.health.v1 one status for the server ("") and for its main service.
import http2 from "node:http2";
import { type Server, ServerCredentials } from "@grpc/grpc-js";
import type { ServingStatus } from "grpc-health-check";
import { Code, TesseraError } from "../../common/errors.ts";

/**
 * Listens without TLS; resolves with the bound port (useful with port 0). The sockets it accepts have
 * Nagle's algorithm off (see withoutNagle).
 */
export function bind(server: Server, host: string, port: number): Promise<number> {
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    const restore = withoutNagle();
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, bound) => {
      restore();
      if (err) {
        reject(
          new TesseraError(Code.UNAVAILABLE, `cannot listen on ${address}: ${err.message}`, { cause: err }),
        );
      } else resolve(bound);
    });
  });
}

/** http2.createServer as grpc-js found it, while a bind has it replaced; and the binds under way. */
let createServer: typeof http2.createServer | undefined;
let binding = 0;

/**
 * Until the returned function is called, the http2 servers grpc-js creates (it does while binding)
 * turn Nagle's algorithm off on the sockets they accept. grpc-js sets TCP_NODELAY on the sockets it
 * dials but has no option for those it accepts, so a small message a server streams (a token, a
 * relay frame, a shard's logits) could wait for the peer's ACK of the one before: the delayed-ACK
 * stall that shows up as tens of milliseconds in tail latencies. `noDelay` is a net.Server option;
 * the patch applies to this thread's http2 module only, for the duration of the binds.
 */
function withoutNagle(): () => void {
  const module = http2 as { createServer: typeof http2.createServer };
  if (binding++ === 0) {
    const original = module.createServer;
    createServer = original;
    module.createServer = ((options: http2.ServerOptions, ...rest: unknown[]) =>
      (original as (...args: unknown[]) => http2.Http2Server)(
        { ...options, noDelay: true },
        ...rest,
      )) as typeof http2.createServer;
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    if (--binding === 0 && createServer) module.createServer = createServer;
  };
}

/** The health statuses of a server: the server as a whole ("") and `service`. */
export function servingStatuses(status: ServingStatus, service: string): Record<string, ServingStatus> {
  return { "": status, [service]: status };
}

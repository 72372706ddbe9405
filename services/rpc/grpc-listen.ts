// What every Tessera gRPC server does to go live: listen on host:port (IPv6 hosts bracketed), and give
// grpc.health.v1 one status for the server ("") and for its main service.
import http2 from "node:http2";
import { type Server, ServerCredentials } from "@grpc/grpc-js";
import type { ServingStatus } from "grpc-health-check";
import { Code, TesseraError } from "../kernel/errors.ts";

export interface BindOptions {
  /**
   * HTTP/2 receive window (bytes) of the connections the server accepts, per stream and per
   * connection; default Node's 64 KiB. grpc-js honours `grpc-node.flow_control_window` only on the
   * connections it dials, so a server that receives large messages sets it here.
   */
  flowControlWindow?: number;
  /** TLS (tls-credentials.ts: serverCredentials); default plaintext. */
  credentials?: ServerCredentials;
}

/**
 * Listens, plaintext unless `options.credentials` say TLS; resolves with the bound port (useful with
 * port 0). The sockets it accepts have Nagle's algorithm off, and the receive window of `options` (see
 * patchServers).
 */
export function bind(server: Server, host: string, port: number, options: BindOptions = {}): Promise<number> {
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  if (options.flowControlWindow !== undefined) setReceiveWindow(server, options.flowControlWindow);
  return new Promise((resolve, reject) => {
    const restore = patchServers();
    server.bindAsync(address, options.credentials ?? ServerCredentials.createInsecure(), (err, bound) => {
      restore();
      if (err) {
        reject(
          new TesseraError(Code.UNAVAILABLE, `cannot listen on ${address}: ${err.message}`, { cause: err }),
        );
      } else resolve(bound);
    });
  });
}

/**
 * Gives the http2 servers that `server` creates when it binds this per-stream receive window (the
 * connection's follows it, see patchServers). grpc-js builds them from its `commonServerOptions`,
 * which has no public setter: we fail at start-up if a grpc-js version renamed it.
 */
function setReceiveWindow(server: Server, window: number): void {
  const internals = server as unknown as { commonServerOptions?: http2.ServerOptions };
  const common = internals.commonServerOptions;
  if (common === undefined) {
    throw new TesseraError(
      Code.INTERNAL,
      "grpc-js Server has no commonServerOptions: cannot set its receive window",
    );
  }
  common.settings = { ...common.settings, initialWindowSize: window };
}

type CreateServer = (options: http2.ServerOptions, ...rest: unknown[]) => http2.Http2Server;

/** http2's server factories as grpc-js found them, while a bind has them replaced; and the binds under way. */
let originals: { createServer: CreateServer; createSecureServer: CreateServer } | undefined;
let binding = 0;

/**
 * Until the returned function is called, the http2 servers grpc-js creates (it does while binding)
 * turn Nagle's algorithm off on the sockets they accept, and give each connection the receive window
 * their settings give a stream.
 *
 * - Nagle: grpc-js sets TCP_NODELAY on the sockets it dials but has no option for those it accepts,
 *   so a small message a server streams (a token, a relay frame, a shard's logits) could wait for
 *   the peer's ACK of the one before: the delayed-ACK stall that shows up as tens of milliseconds in
 *   tail latencies. `noDelay` is a net.Server option.
 * - Receive window (a server bound with `flowControlWindow`): with Node's 64 KiB, a peer sending a
 *   larger message (a prefill's hidden states to a pipeline stage: 8 MiB for 512 tokens of a
 *   4096-wide model) stops every 64 KiB until a window update comes back. The stream's window is an
 *   initial setting (setReceiveWindow); the connection's is raised as each session starts.
 *
 * Both factories are patched (plaintext and TLS servers). The patch applies to this thread's http2
 * module only, for the duration of the binds.
 */
function patchServers(): () => void {
  const module = http2 as unknown as { createServer: CreateServer; createSecureServer: CreateServer };
  if (binding++ === 0) {
    originals = { createServer: module.createServer, createSecureServer: module.createSecureServer };
    module.createServer = patched(originals.createServer);
    module.createSecureServer = patched(originals.createSecureServer);
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    if (--binding === 0 && originals) Object.assign(module, originals);
  };
}

/** `create` (plaintext or TLS) with noDelay on and the connection's receive window raised. */
function patched(create: CreateServer): CreateServer {
  return (options, ...rest) => {
    const server = create({ ...options, noDelay: true } as http2.ServerOptions, ...rest);
    const window = options.settings?.initialWindowSize;
    if (window !== undefined && window > DEFAULT_WINDOW)
      server.on("session", (session) => session.setLocalWindowSize(window));
    return server;
  };
}

/** HTTP/2's initial window (RFC 9113). */
const DEFAULT_WINDOW = 65_535;

/** The health statuses of a server: the server as a whole ("") and `service`. */
export function servingStatuses(status: ServingStatus, service: string): Record<string, ServingStatus> {
  return { "": status, [service]: status };
}

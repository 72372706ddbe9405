// An HTTP/2 listener of our own (h2-connection.ts) in front of a grpc-js server: the gRPC methods
// named in `handlers` are served here on their streams, every other stream is passed to the grpc-js
// server behind it (h2-proxy.ts), which listens on loopback only. It is how the router serves Generate
// without node:http2's server streams, which outlive their requests until a full GC (issue 22).
// Plaintext (prior knowledge, as gRPC clients speak it), or TLS with ALPN "h2" on a folder that is
// followed as it rotates (tls-credentials.ts followFolder: new connections get the new identity).
import type { IncomingHttpHeaders } from "node:http2";
import net, { type AddressInfo } from "node:net";
import tls from "node:tls";
import { SlotTable } from "../../kernel/slot-table.ts";
import { isGrpcCall } from "../http2-server-call.ts";
import { followFolder } from "../tls-credentials.ts";
import type { TlsFolder } from "../tls-folder.ts";
import { H2Connection } from "./h2-connection.ts";
import { H2Proxy } from "./h2-proxy.ts";
import type { H2ServerStream } from "./h2-server-stream.ts";
import type { HeaderList } from "./hpack.ts";

/** Serves one stream of its path (a POST of content-type application/grpc*). */
export type FrontDoorHandler = (stream: H2ServerStream, headers: IncomingHttpHeaders, path: string) => void;

export interface FrontDoorOptions {
  host: string;
  port: number;
  handlers: ReadonlyMap<string, FrontDoorHandler>;
  /** The server every other stream goes to, as a URL (http://127.0.0.1:port). */
  behind: string;
  /** A handler that threw: its stream is reset (INTERNAL_ERROR) and the server goes on. */
  onError: (err: unknown) => void;
  /** TLS on this folder (with `clientAuth`, clients must present a certificate its CA signed); default plaintext. */
  tls?: { folder: TlsFolder; clientAuth: boolean } | undefined;
}

export class H2FrontDoor {
  readonly port: number;
  readonly #server: net.Server;
  readonly #connections: SlotTable<H2Connection>;
  readonly #proxy: H2Proxy;
  readonly #unfollow: () => void;

  private constructor(
    server: net.Server,
    connections: SlotTable<H2Connection>,
    proxy: H2Proxy,
    unfollow: () => void,
  ) {
    this.#server = server;
    this.#connections = connections;
    this.#proxy = proxy;
    this.#unfollow = unfollow;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Listens; rejects with the listen error (the caller names the address and setting). */
  static async listen(options: FrontDoorOptions): Promise<H2FrontDoor> {
    const proxy = new H2Proxy(options.behind);
    const connections = new SlotTable<H2Connection>();
    const onStream = (stream: H2ServerStream, headers: HeaderList) => {
      const incoming = headerObject(headers);
      const path = incoming[":path"];
      const handler = typeof path === "string" ? options.handlers.get(path) : undefined;
      if (handler && incoming[":method"] === "POST" && isGrpcCall(incoming))
        handler(stream, incoming, path as string);
      else proxy.forward(stream, incoming);
    };
    const serve = (socket: net.Socket) => {
      const connection = new H2Connection(socket, { onStream, onError: options.onError });
      const slot = connections.add(connection);
      void connection.done.then(() => connections.delete(slot));
    };
    let server: net.Server;
    let unfollow = () => {};
    if (options.tls) {
      const { options: secure, follow } = followFolder(options.tls.folder, options.tls.clientAuth);
      // A client that cannot finish the handshake (plaintext, no certificate, an unknown CA) is
      // dropped by node:tls with the alert; nothing of it reaches a connection.
      const secureServer = tls.createServer({ ...secure, ALPNProtocols: ["h2"], noDelay: true }, serve);
      secureServer.on("tlsClientError", () => {});
      unfollow = follow(secureServer);
      server = secureServer;
    } else server = net.createServer({ noDelay: true }, serve);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(options.port, options.host, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (err) {
      unfollow();
      throw err;
    }
    return new H2FrontDoor(server, connections, proxy, unfollow);
  }

  /** Connections open now. */
  get connections(): number {
    return this.#connections.size;
  }

  /**
   * Stops listening and sends every connection GOAWAY; resolves once they are all closed, or when
   * `timeoutMs` passes (the rest are then closed, their streams cancelled).
   */
  async close(timeoutMs: number): Promise<void> {
    this.#unfollow();
    this.#server.close();
    const open = this.#connections.values();
    for (const connection of open) connection.goAway();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all(open.map((c) => c.done)), timeout]);
    clearTimeout(timer);
    for (const connection of this.#connections.values()) connection.destroy();
    this.#proxy.close();
  }
}

/** A header list as node:http2 hands headers over: one key per name, repeated names as arrays. */
function headerObject(fields: HeaderList): IncomingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    const value = fields[i + 1]!;
    const before = out[name];
    out[name] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  return out as IncomingHttpHeaders;
}

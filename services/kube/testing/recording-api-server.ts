// Stand-ins for the far side of a connection in the kube client's auth and proxy specs: an HTTPS
// "API server" that records each request's bearer token and client certificate and answers 401 to
// tokens it does not accept (an empty PodList otherwise), and an HTTP CONNECT proxy that records
// where it was asked to go.
import { once } from "node:events";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, connect as connectTcp } from "node:net";
import type { TLSSocket } from "node:tls";
import { selfSignedCertificate } from "../../../devtools/devcluster/apiserver/http/tls-certificate.ts";

export interface SeenRequest {
  token: string | undefined;
  /** The client certificate's common name, when one was presented. */
  clientCertificate: string | undefined;
}

export interface RecordingApiServer {
  /** https://127.0.0.1:port */
  url: string;
  port: number;
  /** The server's certificate, its own CA; also valid as a client certificate with `key`. */
  cert: string;
  key: string;
  seen: SeenRequest[];
  /** Which bearer tokens get an answer; the others get 401. Default: all. */
  accept: (token: string | undefined) => boolean;
  close(): Promise<void>;
}

export async function startRecordingApiServer(): Promise<RecordingApiServer> {
  const { cert, key } = await selfSignedCertificate(["127.0.0.1", "localhost"]);
  const seen: SeenRequest[] = [];
  const state: RecordingApiServer = {
    url: "",
    port: 0,
    cert,
    key,
    seen,
    accept: () => true,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  const server = createHttpsServer(
    { cert, key, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const token = req.headers.authorization?.replace(/^Bearer /, "");
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      seen.push({ token, clientCertificate: peer.subject ? String(peer.subject.CN) : undefined });
      const ok = state.accept(token);
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          ok
            ? { kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "1" }, items: [] }
            : {
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                reason: "Unauthorized",
                code: 401,
                message: "Unauthorized",
              },
        ),
      );
    },
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  state.port = (server.address() as AddressInfo).port;
  state.url = `https://127.0.0.1:${state.port}`;
  return state;
}

export interface ConnectProxy {
  url: string;
  /** host:port of each CONNECT. */
  targets: string[];
  close(): Promise<void>;
}

/** A CONNECT proxy that sends every tunnel to 127.0.0.1 (same port), whatever host was asked for. */
export async function startConnectProxy(): Promise<ConnectProxy> {
  const targets: string[] = [];
  const tunnels = new Set<{ destroy(): void }>();
  const server: Server = createHttpServer((_req, res) => res.writeHead(405).end());
  server.on("connect", (req, client, head) => {
    targets.push(req.url ?? "");
    const port = Number(new URL(`http://${req.url}`).port);
    const upstream = connectTcp(port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.add(client).add(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    close: async () => {
      for (const socket of tunnels) socket.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

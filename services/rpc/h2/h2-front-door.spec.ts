import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import os from "node:os";
import path from "node:path";
import { type ClientReadableStream, credentials, Server, type ServiceError } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { bind } from "../grpc-listen.ts";
import { checkHealth, HealthClient } from "../health-client.ts";
import { secretFiles, testCa, testLeaf, writeSecretVolume } from "../testing/test-pki.ts";
import { TlsFolder } from "../tls-folder.ts";
import { type FrontDoorOptions, H2FrontDoor } from "./h2-front-door.ts";

const OWN_PATH = "/test.Own/Call";

/** A grpc-js server with health behind a front door that serves OWN_PATH itself. */
async function start(tls?: FrontDoorOptions["tls"]): Promise<{
  door: H2FrontDoor;
  health: HealthImplementation;
  server: Server;
  own: string[];
}> {
  const server = new Server();
  const health = new HealthImplementation({ "": "SERVING" });
  health.addToServer(server);
  const behind = await bind(server, "127.0.0.1", 0);
  const own: string[] = [];
  const door = await H2FrontDoor.listen({
    host: "127.0.0.1",
    port: 0,
    behind: `http://127.0.0.1:${behind}`,
    onError: () => {},
    tls,
    handlers: new Map([
      [
        OWN_PATH,
        (stream, headers, path) => {
          own.push(`${path} ${headers["x-who"]}`);
          stream.on("end", () => {
            stream.respond([":status", "200", "content-type", "application/grpc"], { waitForTrailers: true });
            stream.write(Buffer.from([0, 0, 0, 0, 0]));
            stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
            stream.end();
          });
        },
      ],
    ]),
  });
  return { door, health, server, own };
}

/** One call of OWN_PATH with node:http2 as a plain gRPC client; its grpc-status. */
async function callOwn(session: http2.ClientHttp2Session, who: string): Promise<unknown> {
  const call = session.request({
    ":method": "POST",
    ":path": OWN_PATH,
    "content-type": "application/grpc",
    te: "trailers",
    "x-who": who,
  });
  const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => call.on("trailers", resolve));
  call.end(Buffer.from([0, 0, 0, 0, 0]));
  call.resume();
  return (await trailers)["grpc-status"];
}

describe("H2FrontDoor", () => {
  it("serves its own paths and passes grpc.health.v1 Check and Watch to grpc-js behind it", async () => {
    const { door, health, server, own } = await start();
    const address = `127.0.0.1:${door.port}`;
    try {
      assert.equal(await checkHealth(address), "SERVING");
      // A server-streaming call through the proxy: Watch sees a change made behind.
      const client = new HealthClient(address, credentials.createInsecure());
      const watch = (
        client["watch"] as (r: { service: string }) => ClientReadableStream<{ status: string }>
      ).call(client, { service: "" });
      const statuses: string[] = [];
      watch.on("error", () => {});
      watch.on("data", (m: { status: string }) => statuses.push(m.status));
      while (statuses.length < 1) await new Promise((r) => setTimeout(r, 5));
      health.setStatus("", "NOT_SERVING");
      while (statuses.length < 2) await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(statuses, ["SERVING", "NOT_SERVING"]);
      watch.cancel();
      client.close();

      // Its own path, with node:http2 as a plain gRPC client.
      const session = http2.connect(`http://${address}`);
      assert.equal(await callOwn(session, "me"), "0");
      assert.deepEqual(own, [`${OWN_PATH} me`]);
      session.close();
    } finally {
      await door.close(1_000);
      server.forceShutdown();
    }
  });

  it("serves TLS with ALPN h2 on a folder: its own paths, health passed behind, plaintext refused", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "front-door-tls-"));
    const ca = await testCa();
    writeSecretVolume(dir, secretFiles(await testLeaf(ca, "router"), ca));
    const folder = TlsFolder.open(dir, { needCa: false });
    const { door, server, own } = await start({ folder, clientAuth: false });
    const address = `127.0.0.1:${door.port}`;
    try {
      const trusted = { credentials: credentials.createSsl(Buffer.from(ca.cert)), options: {} };
      assert.equal(await checkHealth(address, "", 5_000, trusted), "SERVING");
      const session = http2.connect(`https://localhost:${door.port}`, { ca: ca.cert });
      assert.equal(await callOwn(session, "tls"), "0");
      assert.equal((session.socket as unknown as { alpnProtocol: string }).alpnProtocol, "h2");
      assert.deepEqual(own, [`${OWN_PATH} tls`]);
      session.close();
      await assert.rejects(checkHealth(address, "", 500));
    } finally {
      await door.close(1_000);
      server.forceShutdown();
      folder.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("cancels the call behind when the client resets a passed-on stream", async () => {
    const { door, server } = await start();
    const address = `127.0.0.1:${door.port}`;
    try {
      const client = new HealthClient(address, credentials.createInsecure());
      const watch = (client["watch"] as (r: { service: string }) => ClientReadableStream<unknown>).call(
        client,
        {
          service: "",
        },
      );
      await once(watch, "data");
      const ended = new Promise<ServiceError>((resolve) => watch.on("error", resolve));
      watch.cancel();
      assert.equal((await ended).code, 1); // CANCELLED
      client.close();
      // grpc-js behind has no call left: a graceful shutdown completes at once.
      await door.close(1_000);
      await new Promise<void>((resolve, reject) =>
        server.tryShutdown((err) => (err ? reject(err) : resolve())),
      );
    } finally {
      server.forceShutdown();
    }
  });

  it("closes: GOAWAY to the connections, no new ones accepted", async () => {
    const { door, server } = await start();
    const address = `127.0.0.1:${door.port}`;
    try {
      const session = http2.connect(`http://${address}`);
      session.on("error", () => {});
      await once(session, "connect");
      const goaway = once(session, "goaway");
      await door.close(1_000);
      await goaway;
      await assert.rejects(checkHealth(address, "", 500));
      session.destroy();
    } finally {
      server.forceShutdown();
    }
  });
});

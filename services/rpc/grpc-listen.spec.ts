import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import { Server } from "@grpc/grpc-js";
import { Code, TesseraError } from "../kernel/errors.ts";
import { bind, servingStatuses } from "./grpc-listen.ts";

describe("grpc-listen", () => {
  it("binds a free port and reports it, and names the address it cannot take", async () => {
    const server = new Server();
    const port = await bind(server, "127.0.0.1", 0);
    assert.ok(port > 0);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const taken = (blocker.address() as net.AddressInfo).port;
    await assert.rejects(
      bind(new Server(), "127.0.0.1", taken),
      (e: unknown) =>
        e instanceof TesseraError && e.code === Code.UNAVAILABLE && e.message.includes(`127.0.0.1:${taken}`),
    );
    blocker.close();
    server.forceShutdown();
  });

  it("has grpc-js create its http2 servers with Nagle's algorithm off, and puts createServer back", async () => {
    const module = http2 as { createServer: typeof http2.createServer };
    const original = module.createServer;
    const seen: unknown[] = [];
    const spy = ((options: http2.ServerOptions) => {
      seen.push(options);
      return original(options);
    }) as typeof http2.createServer;
    module.createServer = spy;
    const servers = [new Server(), new Server()];
    try {
      await Promise.all(servers.map((server) => bind(server, "127.0.0.1", 0)));
      assert.equal(module.createServer, spy);
    } finally {
      module.createServer = original;
      for (const server of servers) server.forceShutdown();
    }
    assert.equal(seen.length, 2);
    for (const options of seen) assert.equal((options as { noDelay?: boolean }).noDelay, true);
  });

  it("opens accepted connections with the receive window it was given, per stream and per connection", async () => {
    const window = 8 * 1024 * 1024;
    const wide = new Server();
    const plain = new Server();
    const ports = [
      await bind(wide, "127.0.0.1", 0, { flowControlWindow: window }),
      await bind(plain, "127.0.0.1", 0),
    ];
    const sessions = ports.map((port) => http2.connect(`http://127.0.0.1:${port}`));
    try {
      // The server's SETTINGS (the stream window) come first; its connection WINDOW_UPDATE right after.
      await Promise.all(sessions.map((s) => new Promise((r) => s.once("remoteSettings", r))));
      await new Promise((r) => setTimeout(r, 50));
      const [wideSession, plainSession] = sessions as [http2.ClientHttp2Session, http2.ClientHttp2Session];
      assert.equal(wideSession.remoteSettings.initialWindowSize, window);
      assert.equal(wideSession.state.remoteWindowSize, window);
      assert.equal(plainSession.remoteSettings.initialWindowSize, 65_535);
      assert.equal(plainSession.state.remoteWindowSize, 65_535);
    } finally {
      for (const s of sessions) s.destroy();
      wide.forceShutdown();
      plain.forceShutdown();
    }
  });

  it("gives the server and its service the same status", () => {
    assert.deepEqual(servingStatuses("NOT_SERVING", "tessera.v1.Inference"), {
      "": "NOT_SERVING",
      "tessera.v1.Inference": "NOT_SERVING",
    });
  });
});

import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { Code } from "./errors.ts";
import { hostPort, listening } from "./listen-failure.ts";

describe("listen failures", () => {
  let taken: net.Server;
  let port: number;
  before(async () => {
    taken = net.createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    port = (taken.address() as net.AddressInfo).port;
  });
  after(() => taken.close());

  const listen = (host: string) => {
    const server = net.createServer();
    return new Promise<net.Server>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve(server));
    });
  };

  it("names the address, the setting and 'address in use' for a taken port", async () => {
    const address = hostPort("127.0.0.1", port);
    await assert.rejects(
      listening(address, "httpPort", () => listen("127.0.0.1")),
      (err: Error) => {
        assert.equal(err.message, `cannot listen on 127.0.0.1:${port} (httpPort): address in use`);
        assert.equal((err as { code?: unknown }).code, Code.UNAVAILABLE);
        return true;
      },
    );
  });

  it("says when the address is not this machine's", async () => {
    await assert.rejects(
      listening(hostPort("192.0.2.1", port), "--bind-address", () => listen("192.0.2.1")),
      /\(--bind-address\): address not available on this machine$/,
    );
  });

  it("brackets IPv6 hosts", () => {
    assert.equal(hostPort("::1", 8080), "[::1]:8080");
    assert.equal(hostPort("127.1.0.3", 8080), "127.1.0.3:8080");
  });
});

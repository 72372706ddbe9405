import assert from "node:assert/strict";
import net from "node:net";
import { Server } from "@grpc/grpc-js";
import { Code, TesseraError } from "../../common/errors.ts";
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

  it("gives the server and its service the same status", () => {
    assert.deepEqual(servingStatuses("NOT_SERVING", "tessera.v1.Inference"), {
      "": "NOT_SERVING",
      "tessera.v1.Inference": "NOT_SERVING",
    });
  });
});

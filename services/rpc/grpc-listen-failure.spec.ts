// A gRPC server whose port is taken fails with the one line every Tessera listener gives
// (services/kernel/listen-failure.ts): grpc-js reports the errno only inside its bind error's message.
import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { Server } from "@grpc/grpc-js";
import { hostPort, listening } from "../kernel/listen-failure.ts";
import { bind } from "./grpc-listen.ts";

describe("gRPC listen failure", () => {
  it("names the address, the setting and 'address in use' for a taken port", async () => {
    const taken = net.createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    const { port } = taken.address() as net.AddressInfo;
    try {
      await assert.rejects(
        listening(hostPort("127.0.0.1", port), "--port", () => bind(new Server(), "127.0.0.1", port)),
        { message: `cannot listen on 127.0.0.1:${port} (--port): address in use` },
      );
    } finally {
      taken.close();
    }
  });
});

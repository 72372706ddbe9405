import assert from "node:assert/strict";
import net from "node:net";
import { RedisServer } from "./redis-harness.ts";
import { type RespAddress, RespConnection, RespReplyError } from "./resp-connection.ts";

const address = (port: number, extra: Partial<RespAddress> = {}): RespAddress => ({
  host: "127.0.0.1",
  port,
  connectTimeoutMs: 5_000,
  ...extra,
});

/** A server that answers each command line with the next reply, one byte per write. */
async function dribbling(replies: string[]): Promise<{ port: number; close: () => void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    let next = 0;
    socket.on("data", async (chunk) => {
      for (const _ of chunk.toString("latin1").matchAll(/^\*\d+\r\n/gm)) {
        const reply = Buffer.from(replies[next++] ?? "");
        for (const byte of reply) {
          socket.write(Buffer.of(byte));
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe("RespConnection", () => {
  it("parses every reply kind split at every byte, a bulk reply into the buffer it was given", async () => {
    const fake = await dribbling([
      "+OK\r\n",
      "$5\r\nhello\r\n",
      "$-1\r\n",
      ":42\r\n",
      "-ERR bad\r\n",
      "$0\r\n\r\n",
    ]);
    const connection = new RespConnection(address(fake.port));
    try {
      const target = Buffer.alloc(5);
      const replies = [
        connection.send(["SET", "k", Buffer.from("v")]),
        connection.send(["GET", "k"], (length) => (length === 5 ? target : undefined)),
        connection.send(["GET", "none"]),
        connection.send(["INCR", "n"]),
        connection.send(["BAD"]).catch((err: unknown) => err),
        connection.send(["GET", "empty"]),
      ];
      const [ok, hello, none, n, bad, empty] = await Promise.all(replies);
      assert.equal(ok, "OK");
      assert.equal(hello, target);
      assert.equal(target.toString(), "hello");
      assert.equal(none, null);
      assert.equal(n, 42);
      assert.ok(bad instanceof RespReplyError && bad.name === "ReplyError" && bad.message === "ERR bad");
      assert.deepEqual(empty, Buffer.alloc(0));
    } finally {
      connection.close();
      fake.close();
    }
  });

  describe("against redis-server", () => {
    let server: RedisServer;
    before(async () => {
      server = await RedisServer.start({ password: "pw" });
    });
    after(async () => {
      await server?.close();
    });

    it("round-trips a value written from several parts, and large values pipelined", async () => {
      const connection = new RespConnection(address(server.port, { password: "pw" }));
      try {
        const parts = [Buffer.from("head:"), new Uint8Array(1 << 20).fill(7), Buffer.from(":tail")];
        const values = Array.from({ length: 6 }, (_, i) =>
          Buffer.concat(parts.map((p) => Buffer.from(p))).fill(i, 5, 6),
        );
        const sets = values.map((_, i) => {
          const own = [parts[0]!, Buffer.from([i]), parts[1]!.subarray(1), parts[2]!];
          return connection.send(["SET", `resp:${i}`, own, "PX", "60000"]);
        });
        assert.deepEqual(
          await Promise.all(sets),
          values.map(() => "OK"),
        );
        const got = await Promise.all(values.map((_, i) => connection.send(["GET", `resp:${i}`])));
        for (const [i, value] of got.entries())
          assert.ok(Buffer.isBuffer(value) && value.equals(values[i]!), `value ${i}`);
        assert.ok(((await connection.send(["PTTL", "resp:0"])) as number) > 50_000);
      } finally {
        connection.close();
      }
    });

    it("fails the connection with the server's answer when the password is wrong", async () => {
      const connection = new RespConnection(address(server.port, { password: "wrong" }));
      await assert.rejects(connection.send(["GET", "k"]), /WRONGPASS/);
      assert.equal(connection.usable, false);
      await assert.rejects(connection.send(["GET", "k"]), /WRONGPASS/);
    });

    it("rejects every pending command when the server goes away", async () => {
      const own = await RedisServer.start();
      const connection = new RespConnection(address(own.port));
      assert.equal(await connection.send(["SET", "k", Buffer.alloc(8 << 20)]), "OK");
      const pending = Promise.allSettled(Array.from({ length: 4 }, () => connection.send(["GET", "k"])));
      await own.kill();
      const results = await pending;
      assert.ok(results.some((r) => r.status === "rejected"));
      for (const r of results) if (r.status === "rejected") assert.ok(!(r.reason instanceof RespReplyError));
      assert.equal(connection.usable, false);
      await own.close();
    });
  });
});

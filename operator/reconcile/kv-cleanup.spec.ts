import assert from "node:assert/strict";
import net from "node:net";
import { FakeRedis } from "../testing/fake-redis.ts";
import { globPrefix, RedisKeyCleaner } from "./kv-cleanup.ts";
import { encodeCommand, parseReply, RespConnection } from "./resp-client.ts";

describe("KV store cleanup (Redis)", () => {
  let redis: FakeRedis;
  let address: string;
  beforeEach(async () => {
    redis = new FakeRedis();
    address = await redis.start();
  });
  afterEach(() => redis.close());

  it("deletes only the model's keys, in its database, after AUTH", async () => {
    redis.password = "s3cret";
    const db = redis.db(2);
    for (const key of ["tessera:ml:tiny:a", "tessera:ml:tiny:b", "tessera:ml:tiny2:a", "other"])
      db.set(key, "v");
    const deleted = await new RedisKeyCleaner().deleteKeys(
      { address, db: 2, password: "s3cret" },
      "tessera:ml:tiny:",
    );
    assert.equal(deleted, 2);
    assert.deepEqual([...db.keys()], ["tessera:ml:tiny2:a", "other"]);
    assert.deepEqual(
      redis.commands.map((c) => c[0]),
      ["AUTH", "SELECT", "SCAN", "UNLINK"],
    );
  });

  it("fails with the server's error (wrong password) or when nothing listens", async () => {
    redis.password = "right";
    await assert.rejects(
      new RedisKeyCleaner().deleteKeys({ address, db: 0, password: "wrong" }, "p:"),
      /WRONGPASS/,
    );
    await redis.close();
    await assert.rejects(new RedisKeyCleaner().deleteKeys({ address, db: 0 }, "p:"), /redis: .*ECONNREFUSED/);
  });

  it("fails a command that gets no reply, and every command after it", async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const connection = await RespConnection.connect("127.0.0.1", port, 50);
      await assert.rejects(connection.command("PING"), /redis: no reply in 50 ms/);
      await assert.rejects(connection.command("PING"), /redis: no reply in 50 ms/);
      connection.close();
    } finally {
      silent.close();
    }
  });

  it("speaks RESP: commands as bulk arrays, replies of every type, partial replies wait", () => {
    assert.equal(encodeCommand(["SET", "k", "é"]).toString(), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n");
    const reply = Buffer.from("*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n:5\r\n");
    assert.deepEqual(parseReply(reply)?.value, ["0", ["a", 5]]);
    assert.equal(parseReply(reply.subarray(0, 12)), undefined);
    assert.deepEqual(parseReply(Buffer.from("$-1\r\n"))?.value, null);
    assert.equal(globPrefix("a*b[c]:"), "a\\*b\\[c\\]:*");
  });
});

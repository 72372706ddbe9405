import assert from "node:assert/strict";
import { generate } from "selfsigned";
import { testBlocks } from "./kv-test-blocks.ts";
import { openTestStore } from "./kv-test-store.ts";
import { RedisServer } from "./redis-harness.ts";
import type { RedisKvStore } from "./redis-kv-store.ts";

/** A self-signed certificate for 127.0.0.1 that is its own CA. */
async function certificate(): Promise<{ cert: string; key: string }> {
  const now = Date.now();
  const result = await generate([{ name: "commonName", value: "tessera-test-redis" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 24 * 3600 * 1000),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 7 as const, ip: "127.0.0.1" }] },
    ],
  });
  return { cert: result.cert, key: result.private };
}

describe("RedisKvStore over TLS", () => {
  let server: RedisServer;
  const stores: RedisKvStore[] = [];

  before(async () => {
    server = await RedisServer.start({ tls: await certificate(), password: "pw" });
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await server?.close();
  });

  it("connects to rediss:// trusting the configured CA file and moves blocks", async () => {
    const store = await openTestStore(server.url, { config: { tls: { caFile: server.certFile } } });
    stores.push(store);
    assert.deepEqual(store.health, { status: "SERVING" });
    const blocks = testBlocks(store.format, 3);
    await store.putBlocks(blocks);
    assert.equal((await store.getBlocks([blocks[2]!.hash]))[0]?.hash, blocks[2]!.hash);
  });

  it("reports NOT_SERVING with the reason when the server's certificate is not trusted", async () => {
    const store = await openTestStore(server.url);
    stores.push(store);
    assert.equal(store.health.status, "NOT_SERVING");
    assert.match((store.health as { reason: string }).reason, /^rediss:\/\/127\.0\.0\.1:\d+: .*certificate/);
  });
});

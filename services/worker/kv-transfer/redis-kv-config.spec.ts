import assert from "node:assert/strict";
import { connectionOptions, describeAddress, parseRedisKvConfig } from "./redis-kv-config.ts";

function parse(raw: unknown) {
  const { value, error } = parseRedisKvConfig(raw);
  if (error) throw error;
  return value;
}

describe("KV store config", () => {
  it("defaults to a local Redis, a 10 min TTL, a 2 s deadline, 8 bulk connections and 4 MiB pipelines", () => {
    const config = parse(undefined);
    assert.deepEqual(
      { ...config },
      {
        ttlMs: 600_000,
        opTimeoutMs: 2_000,
        connectTimeoutMs: 5_000,
        keyPrefix: "tessera:kv:",
        connections: 8,
        maxPipelineBytes: 4 * 1024 * 1024,
      },
    );
    const options = connectionOptions(config);
    assert.equal(describeAddress(options), "redis://127.0.0.1:6379");
    assert.equal(options.tls, undefined);
  });

  it("reads address, ACL user, password and database from a URL; explicit fields win", () => {
    const options = connectionOptions(parse({ url: "redis://kv:p%40ss@redis.tessera:6380/2" }));
    assert.deepEqual(
      [options.host, options.port, options.username, options.password, options.db],
      ["redis.tessera", 6380, "kv", "p@ss", 2],
    );
    const overridden = connectionOptions(parse({ url: "redis://redis.tessera", password: "from-secret" }));
    assert.deepEqual([overridden.port, overridden.password], [6379, "from-secret"]);
  });

  it("turns TLS on for rediss:// and reads CA, certificate and key files", () => {
    assert.deepEqual(connectionOptions(parse({ url: "rediss://redis.tessera" })).tls, {});
    const files: Record<string, string> = { "/ca.pem": "CA", "/cert.pem": "CERT", "/key.pem": "KEY" };
    const read = (path: string) => Buffer.from(files[path] ?? "");
    const tls = { caFile: "/ca.pem", certFile: "/cert.pem", keyFile: "/key.pem", servername: "redis" };
    const options = connectionOptions(parse({ host: "redis", port: 6380, tls }), read);
    assert.deepEqual(
      {
        ...options.tls,
        ca: String(options.tls?.ca),
        cert: String(options.tls?.cert),
        key: String(options.tls?.key),
      },
      { rejectUnauthorized: true, ca: "CA", cert: "CERT", key: "KEY", servername: "redis" },
    );
    assert.equal(describeAddress(options), "rediss://redis:6380");
  });

  it("names the field of an invalid config", () => {
    const cases: [unknown, RegExp][] = [
      [{ url: "http://redis" }, /^KV store config url: must be redis:\/\//],
      [{ url: "redis://a", host: "b" }, /^KV store config url: give url or host\/port, not both/],
      [{ username: "kv" }, /^KV store config username: an ACL username needs a password/],
      [{ port: 70000 }, /^KV store config port:/],
      [{ ttlMs: 0 }, /^KV store config ttlMs:/],
      [{ connections: 0 }, /^KV store config connections:/],
      [{ tls: { caFile: "/ca", verify: false } }, /^KV store config tls/],
      [{ timeout: 5 }, /^KV store config \(root\): Unrecognized key/],
    ];
    for (const [raw, message] of cases) assert.match(parseRedisKvConfig(raw).error?.message ?? "", message);
  });
});

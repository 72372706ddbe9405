import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { hostsFileResolver, parseHosts, resolveAddress } from "./peer-hosts.ts";

describe("peer hosts (the dev cluster's stand-in for cluster DNS)", () => {
  const text = [
    "# pods of headless Services",
    "127.1.0.3 both-0-s0-t1-abc.m-workers.ns.svc.cluster.local both-0-s0-t1-abc.m-workers.ns.svc",
    "127.1.0.9 both-0-s0-t1-abc.m-workers.ns.svc.cluster.local",
    "",
  ].join("\n");

  it("maps every name of a line to its address; the first line of a name wins", () => {
    const hosts = parseHosts(text);
    assert.equal(hosts.get("both-0-s0-t1-abc.m-workers.ns.svc.cluster.local"), "127.1.0.3");
    assert.equal(hosts.get("both-0-s0-t1-abc.m-workers.ns.svc"), "127.1.0.3");
    assert.equal(hosts.size, 2);
  });

  it("replaces a known host and keeps the port; leaves unknown names and IPs to DNS", () => {
    const hosts = parseHosts(text);
    assert.equal(resolveAddress("both-0-s0-t1-abc.m-workers.ns.svc:50051", hosts), "127.1.0.3:50051");
    assert.equal(resolveAddress("BOTH-0-s0-t1-abc.m-workers.ns.svc.:50051", hosts), "127.1.0.3:50051");
    assert.equal(resolveAddress("other.m-workers.ns.svc:50051", hosts), "other.m-workers.ns.svc:50051");
    assert.equal(resolveAddress("127.0.0.1:7", hosts), "127.0.0.1:7");
    assert.equal(resolveAddress("[::1]:7", hosts), "[::1]:7");
  });

  it("reads the file again at every call, so a replaced peer's new IP is found", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "hosts-")), "hosts");
    const resolve = hostsFileResolver(file);
    assert.equal(await resolve("a.s.ns.svc:1"), "a.s.ns.svc:1", "no file yet: DNS");
    writeFileSync(file, "127.1.0.2 a.s.ns.svc\n");
    assert.equal(await resolve("a.s.ns.svc:1"), "127.1.0.2:1");
    writeFileSync(file, "127.1.0.7 a.s.ns.svc\n");
    assert.equal(await resolve("a.s.ns.svc:1"), "127.1.0.7:1");
    assert.equal(await hostsFileResolver(undefined)("a.s.ns.svc:1"), "a.s.ns.svc:1");
  });
});

import assert from "node:assert/strict";
import { formatIp, PodIpPool, parseIp } from "./pod-ip-pool.ts";

describe("pod-ip-pool", () => {
  it("hands out loopback addresses round-robin, skipping .0, .255 and 127.0.0.1", () => {
    const pool = new PodIpPool("127.0.0.0/24");
    assert.equal(pool.allocate(), "127.0.0.2");
    assert.equal(pool.allocate(), "127.0.0.3");
    pool.release("127.0.0.2");
    assert.equal(pool.allocate(), "127.0.0.4");
    assert.equal(pool.used, 2);
  });

  it("gives the preferred address when it is free and in range", () => {
    const pool = new PodIpPool("127.3.0.0/16");
    assert.equal(pool.allocate("127.3.9.9"), "127.3.9.9");
    assert.notEqual(pool.allocate("127.3.9.9"), "127.3.9.9");
    assert.notEqual(pool.allocate("127.4.0.1"), "127.4.0.1");
  });

  it("runs out when every address is taken, and wraps around after releases", () => {
    const pool = new PodIpPool("127.9.9.0/30");
    const got = [pool.allocate(), pool.allocate(), pool.allocate(), pool.allocate()];
    assert.deepEqual(got, ["127.9.9.1", "127.9.9.2", "127.9.9.3", undefined]);
    pool.release("127.9.9.1");
    assert.equal(pool.allocate(), "127.9.9.1");
  });

  it("formats and parses dotted quads", () => {
    assert.equal(formatIp(0x7f010203), "127.1.2.3");
    assert.equal(parseIp("127.1.2.3"), 0x7f010203);
    assert.equal(parseIp("127.1.2"), undefined);
  });
});

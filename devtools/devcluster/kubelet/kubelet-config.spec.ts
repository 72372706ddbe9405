import assert from "node:assert/strict";
import { parseKubeletConfig, parsePodCidr } from "./kubelet-config.ts";

describe("kubelet-config", () => {
  it("fills defaults", () => {
    const config = parseKubeletConfig({});
    assert.equal(config.nodeName, "tessera-node");
    assert.equal(config.podCidr, "127.1.0.0/16");
    assert.equal(config.capacity["nvidia.com/gpu"], 0);
    assert.equal(config.backoff.initialMs, 10_000);
    assert.match(config.clusterId, /^[0-9a-f]{12}$/);
  });

  it("rejects quantities and ranges that are not valid, naming the field", () => {
    assert.throws(() => parseKubeletConfig({ capacity: { cpu: "lots" } }), /capacity\.cpu/);
    assert.throws(() => parseKubeletConfig({ podCidr: "10.0.0.0/8" }), /podCidr/);
  });

  it("parses a pod CIDR into its first address and size", () => {
    assert.deepEqual(parsePodCidr("127.1.0.0/16"), { base: 0x7f010000, size: 65536 });
    assert.deepEqual(parsePodCidr("127.5.6.7/24"), { base: 0x7f050600, size: 256 });
    assert.throws(() => parsePodCidr("127.0.0.0/31"), /podCidr/);
  });
});

import assert from "node:assert/strict";
import { keyOf, objectKey, splitKey } from "./kube-object.ts";

describe("kube object keys", () => {
  it("keys objects by namespace/name, or name when cluster-scoped, and splits keys back", () => {
    assert.equal(objectKey({ metadata: { namespace: "ns", name: "a" } }), "ns/a");
    assert.equal(objectKey({ metadata: { name: "node" } }), "node");
    assert.equal(keyOf("ns", "a"), "ns/a");
    assert.equal(keyOf(undefined, "node"), "node");
    assert.deepEqual(splitKey("ns/name"), { namespace: "ns", name: "name" });
    assert.deepEqual(splitKey("node"), { namespace: "", name: "node" });
    assert.deepEqual(splitKey("/node"), { namespace: "", name: "node" });
  });
});

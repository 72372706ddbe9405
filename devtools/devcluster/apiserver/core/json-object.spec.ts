import assert from "node:assert/strict";
import { getPath, jsonEqual, parseApiVersion, setPath } from "./json-object.ts";

describe("json-object", () => {
  it("compares JSON regardless of key order and ignores undefined keys", () => {
    assert.ok(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, d: undefined }));
    assert.ok(!jsonEqual([1, 2], [2, 1]));
  });

  it("parses apiVersions and walks paths", () => {
    assert.deepEqual(parseApiVersion("apps/v1"), { group: "apps", version: "v1" });
    assert.deepEqual(parseApiVersion("v1"), { group: "", version: "v1" });
    const root = {};
    setPath(root, ["spec", "replicas"], 3);
    assert.equal(getPath(root, ["spec", "replicas"]), 3);
    assert.equal(getPath(root, ["spec", "missing", "x"]), undefined);
  });
});

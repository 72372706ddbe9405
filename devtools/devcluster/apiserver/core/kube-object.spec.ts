import assert from "node:assert/strict";
import { formatMicroTime, formatTime, getPath, jsonEqual, parseApiVersion, setPath } from "./kube-object.ts";

describe("kube-object", () => {
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

  it("formats Time at second and MicroTime at microsecond precision", () => {
    assert.equal(formatTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678)), "2025-01-02T03:04:05Z");
    assert.equal(formatMicroTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678)), "2025-01-02T03:04:05.678000Z");
  });
});

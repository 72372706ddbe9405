import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { applyJsonPatch } from "./json-patch.ts";

describe("json-patch", () => {
  it("applies RFC 6902 operations without touching the input", () => {
    const doc = { spec: { replicas: 1, list: ["a"] } };
    const result = applyJsonPatch(doc, [
      { op: "replace", path: "/spec/replicas", value: 2 },
      { op: "add", path: "/spec/list/-", value: "b" },
      { op: "test", path: "/spec/replicas", value: 2 },
    ]);
    assert.deepEqual(result, { spec: { replicas: 2, list: ["a", "b"] } });
    assert.equal(doc.spec.replicas, 1);
  });

  it("answers a failing operation with 400", () => {
    assert.throws(
      () => applyJsonPatch({}, [{ op: "remove", path: "/missing" }]),
      (err) => statusCodeOf(err) === 400,
    );
    assert.throws(
      () => applyJsonPatch({}, { op: "add" }),
      (err) => statusCodeOf(err) === 400,
    );
  });
});

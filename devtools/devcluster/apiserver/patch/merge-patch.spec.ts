import assert from "node:assert/strict";
import { applyMergePatch } from "./merge-patch.ts";

describe("merge-patch", () => {
  it("merges objects, deletes on null and replaces lists (RFC 7386)", () => {
    const result = applyMergePatch(
      { a: { b: 1, c: 2 }, list: [1, 2], keep: true },
      { a: { b: null, d: 3 }, list: [3] },
    );
    assert.deepEqual(result, { a: { c: 2, d: 3 }, list: [3], keep: true });
  });
});

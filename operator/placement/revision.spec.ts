import assert from "node:assert/strict";
import { canonicalJson, shortHash } from "./revision.ts";

describe("revision hash", () => {
  it("ignores key order and undefined fields, and sees every value", () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }] }), '{"a":[{"d":2}],"b":1}');
    assert.equal(shortHash({ a: 1, b: 2 }), shortHash({ b: 2, a: 1 }));
    assert.notEqual(shortHash({ a: 1 }), shortHash({ a: 2 }));
    assert.match(shortHash({}), /^[0-9a-f]{8}$/);
  });
});

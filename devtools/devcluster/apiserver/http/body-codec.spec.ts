import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { decodeBody, patchTypeOf } from "./body-codec.ts";

describe("body-codec", () => {
  it("decodes JSON and YAML bodies, and maps patch content types", () => {
    assert.deepEqual(decodeBody(Buffer.from('{"a":1}'), "application/json; charset=utf-8"), { a: 1 });
    assert.deepEqual(decodeBody(Buffer.from("a: 1\nb: [x]\n"), "application/apply-patch+yaml"), {
      a: 1,
      b: ["x"],
    });
    assert.equal(decodeBody(Buffer.alloc(0), "application/json"), undefined);
    assert.equal(patchTypeOf("application/strategic-merge-patch+json"), "strategic");
    assert.throws(
      () => patchTypeOf("text/plain"),
      (err) => statusCodeOf(err) === 415,
    );
    assert.throws(
      () => decodeBody(Buffer.from("{"), "application/json"),
      (err) => statusCodeOf(err) === 400,
    );
  });
});

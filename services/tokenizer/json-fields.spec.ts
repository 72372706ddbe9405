import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";

describe("json-fields", () => {
  it("tells plain objects from arrays and null", () => {
    assert.equal(isObject({}), true);
    assert.equal(isObject([]), false);
    assert.equal(isObject(null), false);
    assert.equal(isObject("x"), false);
  });

  it("reads a component's type", () => {
    assert.equal(typeOf({ type: "BPE" }), "BPE");
    assert.equal(typeOf({ type: 3 }), undefined);
  });

  it("builds INVALID_ARGUMENT and UNIMPLEMENTED errors naming the field", () => {
    assert.equal(invalid("model.vocab", "must be an object").error.code, Code.INVALID_ARGUMENT);
    const e = unsupported("decoder.type", "Metaspace").error;
    assert.equal(e.code, Code.UNIMPLEMENTED);
    assert.equal(e.message, "decoder.type: Metaspace");
  });
});

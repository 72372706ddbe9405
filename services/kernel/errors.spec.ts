import assert from "node:assert/strict";
import { Code, TesseraError } from "./errors.ts";

describe("TesseraError", () => {
  it("names the field in invalid-argument errors", () => {
    const err = TesseraError.invalidArgument("max_tokens", "must be > 0");
    assert.equal(err.code, Code.INVALID_ARGUMENT);
    assert.match(err.message, /^max_tokens: must be > 0$/);
  });

  it("wraps unknown errors as INTERNAL and keeps the cause", () => {
    const cause = new Error("boom");
    const err = TesseraError.from(cause);
    assert.equal(err.code, Code.INTERNAL);
    assert.equal(err.cause, cause);
    assert.equal(TesseraError.from(err), err);
  });
});

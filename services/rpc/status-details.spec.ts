import assert from "node:assert/strict";
import { MAX_STATUS_DETAILS, statusDetails } from "./status-details.ts";

describe("statusDetails", () => {
  it("keeps a short message as it is", () => {
    assert.equal(statusDetails('model "x" is not served here'), 'model "x" is not served here');
  });

  it("cuts a long message, saying how long it was, without splitting a surrogate pair", () => {
    const long = `model "${"😀".repeat(MAX_STATUS_DETAILS)}" is not served here`;
    const cut = statusDetails(long);
    assert.ok(cut.length < MAX_STATUS_DETAILS + 40, `${cut.length}`);
    assert.ok(cut.endsWith(`(${long.length} characters, cut)`), cut.slice(-40));
    assert.ok(cut.isWellFormed());
  });

  it("replaces lone surrogates, which cannot be percent-encoded", () => {
    assert.equal(statusDetails("role: \ud800 is not known"), "role: \ufffd is not known");
  });
});

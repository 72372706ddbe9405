import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { parseNormalizer } from "./normalizer.ts";

describe("parseNormalizer", () => {
  it("gives no normalizer for null", () => {
    assert.deepEqual(parseNormalizer(null), { value: undefined });
  });

  it("applies NFC and a Sequence in order", () => {
    const nfc = parseNormalizer({ type: "NFC" }).value!;
    assert.equal(nfc("e\u0301"), "é");
    const seq = parseNormalizer({ type: "Sequence", normalizers: [{ type: "NFKD" }, { type: "Lowercase" }] })
      .value!;
    assert.equal(seq("Ⅻ É"), "xii e\u0301");
    // Hugging Face lowercases character by character: no final sigma.
    assert.equal(parseNormalizer({ type: "Lowercase" }).value!("ΟΔΟΣ"), "οδοσ");
  });

  it("runs Llama 2's Prepend + Replace, on non-empty text only", () => {
    const llama2 = parseNormalizer({
      type: "Sequence",
      normalizers: [
        { type: "Prepend", prepend: "▁" },
        { type: "Replace", pattern: { String: " " }, content: "▁" },
      ],
    }).value!;
    assert.equal(llama2(" Hello  world"), "▁▁Hello▁▁world");
    assert.equal(llama2(""), "");
    const regex = parseNormalizer({ type: "Replace", pattern: { Regex: " {2,}" }, content: "$1 " }).value!;
    assert.equal(regex("a    b c"), "a$1 b c");
    const strip = parseNormalizer({ type: "Strip", strip_left: true, strip_right: false }).value!;
    assert.equal(strip(" \t\u3000a b "), "a b ");
  });

  it("rejects what it does not implement, naming the field", () => {
    const r = parseNormalizer({
      type: "Sequence",
      normalizers: [{ type: "Precompiled", precompiled_charsmap: "" }],
    });
    assert.equal(r.error?.code, Code.UNIMPLEMENTED);
    assert.match(r.error?.message ?? "", /^normalizer\.normalizers\[0\]\.type: Precompiled/);
    assert.equal(parseNormalizer([]).error?.code, Code.INVALID_ARGUMENT);
  });
});

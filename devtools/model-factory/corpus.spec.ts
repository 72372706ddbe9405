import assert from "node:assert/strict";
import { CORPUS } from "./corpus.ts";

describe("corpus", () => {
  it("holds several kilobytes of varied prose, code and data", () => {
    const text = CORPUS.join("\n");
    assert.ok(CORPUS.length >= 10 && CORPUS.every((d) => d.trim().length > 100));
    assert.ok(text.length > 10_000, String(text.length));
    for (const marker of [
      "The lighthouse",
      "def ",
      "export function",
      "func main",
      "apiVersion:",
      "SELECT",
      "# Getting",
    ]) {
      assert.ok(text.includes(marker), marker);
    }
    assert.ok(
      [...text].some((c) => c.codePointAt(0)! > 0x7f),
      "some non-ASCII text for multi-byte merges",
    );
    assert.ok(!text.includes("\r"), "LF line ends only, whatever the checkout");
  });
});

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { BYTE_ALPHABET, BYTE_TO_CHAR, preTokenize, toByteLevel } from "./byte-level.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference");

describe("byte-level", () => {
  it("maps bytes to GPT-2's printable characters", () => {
    assert.equal(BYTE_TO_CHAR[0x20], "Ġ");
    assert.equal(BYTE_TO_CHAR[0x0a], "Ċ");
    assert.equal(BYTE_TO_CHAR[0x41], "A");
    assert.equal(BYTE_TO_CHAR[0xad], "Ń");
    assert.equal(new Set(BYTE_TO_CHAR).size, 256);
  });

  it("orders the alphabet as the reference tokenizer's ids 3..258", () => {
    const tok = JSON.parse(readFileSync(path.join(reference, "tiny-llama/tokenizer.json"), "utf8")) as {
      model: { vocab: Record<string, number> };
    };
    const byId = Object.entries(tok.model.vocab)
      .sort((a, b) => a[1] - b[1])
      .map(([t]) => t);
    assert.deepEqual(byId.slice(3, 259), BYTE_ALPHABET);
  });

  it("splits with the GPT-2 pattern and encodes UTF-8 bytes", () => {
    assert.deepEqual(preTokenize("Hello world, it's 2024!\n    x"), [
      "Hello",
      "Ġworld",
      ",",
      "Ġit",
      "'s",
      "Ġ2024",
      "!",
      "ĊĠĠĠ",
      "Ġx",
    ]);
    assert.equal(toByteLevel("é"), "Ã©");
  });
});

import assert from "node:assert/strict";
import { BYTE_TO_CHAR, byteLevelToBytes, bytesToByteLevel } from "./byte-level.ts";

describe("byte-level alphabet", () => {
  it("maps the 256 bytes to 256 distinct single characters", () => {
    assert.equal(new Set(BYTE_TO_CHAR).size, 256);
    for (const c of BYTE_TO_CHAR) assert.equal(c.length, 1);
  });

  it("keeps printable bytes and moves the others past U+00FF like GPT-2", () => {
    assert.equal(BYTE_TO_CHAR[0x41], "A");
    assert.equal(BYTE_TO_CHAR[0x20], "Ġ");
    assert.equal(BYTE_TO_CHAR[0x0a], "Ċ");
    assert.equal(BYTE_TO_CHAR[0x00], "Ā");
    assert.equal(BYTE_TO_CHAR[0xe9], "é");
    assert.equal(BYTE_TO_CHAR[0xad], "Ń");
  });

  it("round-trips every byte", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    assert.deepEqual(byteLevelToBytes(bytesToByteLevel(all)), all);
    assert.equal(bytesToByteLevel(new TextEncoder().encode(" é")), "ĠÃ©");
  });

  it("reads a string outside the alphabet as its own UTF-8", () => {
    assert.deepEqual(byteLevelToBytes("<s>"), new TextEncoder().encode("<s>"));
    assert.deepEqual(byteLevelToBytes("日本"), new TextEncoder().encode("日本"));
  });
});

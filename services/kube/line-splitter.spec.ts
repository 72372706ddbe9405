import assert from "node:assert/strict";
import { LineSplitter } from "./line-splitter.ts";

describe("line splitter", () => {
  it("joins lines and multi-byte characters cut across chunks, skipping blank lines", () => {
    const splitter = new LineSplitter();
    const text = Buffer.from('{"a":"é"}\n\n{"b":2}\n{"c"');
    assert.deepEqual(splitter.push(text.subarray(0, 7)), []);
    assert.deepEqual(splitter.push(text.subarray(7)), ['{"a":"é"}', '{"b":2}']);
    assert.deepEqual(splitter.push(Buffer.from(":3}\n")), ['{"c":3}']);
  });
});

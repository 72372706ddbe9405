import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { type AddedToken, AddedTokenMatcher, parseAddedTokens, type Segment } from "./added-tokens.ts";

function token(id: number, content: string, options: Partial<AddedToken> = {}): AddedToken {
  return {
    id,
    content,
    special: true,
    singleWord: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    ...options,
  };
}

function split(tokens: AddedToken[], text: string, skipSpecial = false): Segment[] {
  const out: Segment[] = [];
  new AddedTokenMatcher(tokens).split(text, skipSpecial, out);
  return out;
}

describe("parseAddedTokens", () => {
  it("reads Hugging Face's added_tokens entries", () => {
    const r = parseAddedTokens([
      {
        id: 1,
        content: "<s>",
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      },
    ]);
    assert.deepEqual(r.value, [token(1, "<s>")]);
    assert.deepEqual(parseAddedTokens(undefined).value, []);
  });

  it("rejects an entry without id or content, naming it", () => {
    assert.match(
      parseAddedTokens([{ id: 1, content: "" }]).error?.message ?? "",
      /^added_tokens\[0\]\.content/,
    );
    assert.equal(parseAddedTokens([{ content: "x" }]).error?.code, Code.INVALID_ARGUMENT);
  });
});

describe("AddedTokenMatcher", () => {
  it("cuts text at added tokens, leftmost then longest", () => {
    const tokens = [token(1, "<s>"), token(2, "</s>"), token(3, "<|a|>"), token(4, "<|a|>x")];
    assert.deepEqual(split(tokens, "<s>hi</s><|a|>x<|a|>"), [1, "hi", 2, 4, 3]);
    assert.deepEqual(split(tokens, "plain"), ["plain"]);
    assert.deepEqual(split([], "plain"), ["plain"]);
    assert.deepEqual(split(tokens, ""), []);
  });

  it("escapes regex characters in contents", () => {
    assert.deepEqual(split([token(5, "[.*]")], "a[.*]b.*"), ["a", 5, "b.*"]);
  });

  it("can leave special tokens as text, but not the others", () => {
    const tokens = [token(1, "<s>"), token(9, "<tool>", { special: false })];
    assert.deepEqual(split(tokens, "<s><tool>", true), ["<s>", 9]);
  });

  it("strips spaces around tokens with lstrip and rstrip", () => {
    assert.deepEqual(split([token(7, "<m>", { lstrip: true, rstrip: true })], "a \u3000<m>  b"), [
      "a",
      7,
      "b",
    ]);
    assert.deepEqual(split([token(7, "<m>", { lstrip: true })], "  <m> b"), [7, " b"]);
  });

  it("matches single_word tokens only between non-word characters", () => {
    const tokens = [token(8, "hi", { singleWord: true })];
    assert.deepEqual(split(tokens, "hi, ahi hié 🙂hi"), [8, ", ahi hié 🙂", 8]);
  });
});

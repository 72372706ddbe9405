import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { compileOnigRegex } from "./onig-regex.ts";

const GPT2 = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
const LLAMA3 = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

function compile(pattern: string): RegExp {
  const r = compileOnigRegex(pattern);
  if (r.error) throw r.error;
  return r.value;
}

function pieces(pattern: string, text: string): string[] {
  return [...text.matchAll(compile(pattern))].map((m) => m[0]);
}

describe("compileOnigRegex", () => {
  it("splits text with the GPT-2 pattern", () => {
    assert.deepEqual(pieces(GPT2, "Hello world's  42 café!!\n"), [
      "Hello",
      " world",
      "'s",
      " ",
      " 42",
      " café",
      "!!",
      "\n",
    ]);
  });

  it("splits text with the Llama-3 pattern, contractions in any case", () => {
    assert.deepEqual(pieces(LLAMA3, "I'M here 12345\r\n\nok"), [
      "I",
      "'M",
      " here",
      " ",
      "123",
      "45",
      "\r\n\n",
      "ok",
    ]);
  });

  it("gives \\s Oniguruma's meaning: U+0085 is a space, U+FEFF is not", () => {
    assert.deepEqual(pieces(String.raw`\s+|\S+`, "a\u0085\ufeffb"), ["a", "\u0085", "\ufeffb"]);
    assert.deepEqual(pieces(String.raw`[^\s]+`, "a\u0085b"), ["a", "b"]);
  });

  it("gives \\d and \\w their Unicode meaning", () => {
    assert.deepEqual(pieces(String.raw`\d+`, "x٣4y"), ["٣4"]);
    assert.deepEqual(pieces(String.raw`\w+`, "é-ü_1"), ["é", "ü_1"]);
  });

  it("accepts escapes and class characters that JavaScript's unicode modes reject", () => {
    assert.deepEqual(pieces(String.raw`\'\-|[a-c-]+|[(){}|/]`, "'-ab-c(x}"), ["'-", "ab-c", "(", "}"]);
    assert.deepEqual(pieces(String.raw`[\x{61}-\x{62}]+`, "abc"), ["ab"]);
  });

  it("reports an unsupported pattern as UNIMPLEMENTED", () => {
    const r = compileOnigRegex("(?>a)");
    assert.equal(r.error?.code, Code.UNIMPLEMENTED);
    assert.match(r.error?.message ?? "", /\(\?>a\)/);
  });
});

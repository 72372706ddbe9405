import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { parsePreTokenizer, splitPiece } from "./pre-tokenizer.ts";

const LLAMA3_SPLIT = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

function preTokenizer(json: unknown) {
  const r = parsePreTokenizer(json);
  if (r.error) throw r.error;
  return r.value;
}

describe("parsePreTokenizer", () => {
  it("splits with the GPT-2 regex for ByteLevel use_regex", () => {
    const pre = preTokenizer({ type: "ByteLevel", add_prefix_space: false, use_regex: true });
    assert.deepEqual(pre("Hello world's   end\n"), ["Hello", " world", "'s", "  ", " end", "\n"]);
  });

  it("adds a prefix space to each piece when asked", () => {
    const pre = preTokenizer({ type: "ByteLevel", add_prefix_space: true, use_regex: false });
    assert.deepEqual(pre("Hi"), [" Hi"]);
    assert.deepEqual(pre(" Hi"), [" Hi"]);
  });

  it("runs a Llama-3 style Sequence of Split then ByteLevel without regex", () => {
    const pre = preTokenizer({
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: LLAMA3_SPLIT }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    });
    assert.deepEqual(pre("He's 12345 apples!\n\nOK"), [
      "He",
      "'s",
      " ",
      "123",
      "45",
      " apples",
      "!\n\n",
      "OK",
    ]);
  });

  it("leaves the text whole without a pre-tokenizer", () => {
    assert.deepEqual(preTokenizer(null)("a b  c"), ["a b  c"]);
  });

  it("runs Metaspace with each prepend_scheme, and its split", () => {
    const meta = (prepend_scheme: string, split: boolean) =>
      preTokenizer({ type: "Metaspace", replacement: "▁", prepend_scheme, split });
    assert.deepEqual(meta("always", false)("Hello  world"), ["▁Hello▁▁world"]);
    assert.deepEqual(meta("always", false)(" Hello"), ["▁Hello"], "no second ▁ before a space");
    assert.deepEqual(meta("always", false)("Hello", false), ["▁Hello"]);
    assert.deepEqual(meta("first", false)("Hello", true), ["▁Hello"]);
    assert.deepEqual(meta("first", false)("Hello", false), ["Hello"], "not at the start of the input");
    assert.deepEqual(meta("never", false)("Hello world"), ["Hello▁world"]);
    assert.deepEqual(meta("always", true)("Hello  world"), ["▁Hello", "▁", "▁world"]);
    // Older files: add_prefix_space instead of prepend_scheme.
    assert.deepEqual(preTokenizer({ type: "Metaspace", add_prefix_space: false, split: false })("a b"), [
      "a▁b",
    ]);
  });

  it("rejects what it cannot run", () => {
    assert.equal(parsePreTokenizer({ type: "BertPreTokenizer" }).error?.code, Code.UNIMPLEMENTED);
    assert.equal(
      parsePreTokenizer({ type: "Metaspace", prepend_scheme: "sometimes" }).error?.code,
      Code.INVALID_ARGUMENT,
    );
    const splitLast = parsePreTokenizer({
      type: "Sequence",
      pretokenizers: [
        { type: "ByteLevel" },
        { type: "Split", pattern: { String: " " }, behavior: "Isolated" },
      ],
    });
    assert.equal(splitLast.error?.code, Code.UNIMPLEMENTED);
    const badBehavior = parsePreTokenizer({
      type: "Sequence",
      pretokenizers: [{ type: "Split", pattern: { String: " " }, behavior: "Nope" }, { type: "ByteLevel" }],
    });
    assert.match(badBehavior.error?.message ?? "", /^pre_tokenizer\.pretokenizers\[0\]\.behavior/);
  });
});

describe("splitPiece", () => {
  // The examples of Hugging Face's SplitDelimiterBehavior documentation.
  const cases = {
    Removed: ["the", "final", "countdown"],
    Isolated: ["the", "-", "final", "-", "-", "countdown"],
    MergedWithPrevious: ["the-", "final-", "-", "countdown"],
    MergedWithNext: ["the", "-final", "-", "-countdown"],
    Contiguous: ["the", "-", "final", "--", "countdown"],
  } as const;
  for (const [behavior, expected] of Object.entries(cases)) {
    it(`splits "the-final--countdown" on "-" with ${behavior}`, () => {
      const out: string[] = [];
      splitPiece("the-final--countdown", "-", behavior as keyof typeof cases, false, out);
      assert.deepEqual(out, expected);
      const viaRegex: string[] = [];
      splitPiece("the-final--countdown", /-/gv, behavior as keyof typeof cases, false, viaRegex);
      assert.deepEqual(viaRegex, expected);
    });
  }

  it("inverts: keeps the matches as the words", () => {
    const out: string[] = [];
    splitPiece("ab12cd", /\d+/gv, "Removed", true, out);
    assert.deepEqual(out, ["12"]);
  });
});

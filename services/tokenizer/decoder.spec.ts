import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { fallbackByte, PieceDecoder, parseDecoder } from "./decoder.ts";

const LLAMA2 = {
  type: "Sequence",
  decoders: [
    { type: "Replace", pattern: { String: "▁" }, content: " " },
    { type: "ByteFallback" },
    { type: "Fuse" },
    { type: "Strip", content: " ", start: 1, stop: 0 },
  ],
};

function decoder(json: unknown): PieceDecoder {
  const r = parseDecoder(json);
  if (r.error) throw r.error;
  assert.equal(r.value.kind, "pieces");
  return new PieceDecoder(r.value.kind === "pieces" ? r.value.steps : []);
}

/** The pieces a stream hands out for `tokens`, the flush last. */
function stream(json: unknown, tokens: string[]): string[] {
  const d = decoder(json);
  const out = tokens.map((t) => d.push(t));
  out.push(d.flush());
  return out;
}

describe("parseDecoder", () => {
  it("decodes Llama 2's chain: ▁ to space, byte runs to text, one leading space stripped", () => {
    assert.equal(stream(LLAMA2, ["▁Hello", "▁world", "<0x21>"]).join(""), "Hello world!");
    assert.deepEqual(stream(LLAMA2, ["▁Hello", "▁", "<0xE2>", "<0x82>", "<0xAC>", "▁a"]), [
      "Hello",
      " ",
      "",
      "",
      "",
      "€ a",
      "",
    ]);
  });

  it("strips the leading space of the whole text, even when it comes after empty pieces", () => {
    // "<s>" skipped leaves nothing; the space of the first word is still the text's first.
    assert.equal(stream(LLAMA2, ["", "▁Hi"]).join(""), "Hi");
    // "▁" alone is the stripped space: the next word keeps its own.
    assert.equal(stream(LLAMA2, ["▁", "▁Hi"]).join(""), " Hi");
  });

  it("turns a byte run that is not valid UTF-8 into one U+FFFD per byte, as Hugging Face does", () => {
    assert.equal(
      stream(LLAMA2, ["<0xE2>", "<0x82>", "<0xAC>", "<0xFF>", "a"]).join(""),
      `${"\ufffd".repeat(4)}a`,
    );
    assert.equal(stream(LLAMA2, ["a", "<0xE2>", "<0x82>"]).join(""), "a\ufffd\ufffd");
  });

  it("strips per piece before Fuse, and holds trailing characters a Strip after Fuse may cut", () => {
    const perPiece = { type: "Sequence", decoders: [{ type: "Strip", content: " ", start: 1, stop: 1 }] };
    assert.equal(stream(perPiece, [" a ", "  b  "]).join(""), "a b ");
    const fused = {
      type: "Sequence",
      decoders: [{ type: "Fuse" }, { type: "Strip", content: " ", start: 0, stop: 2 }],
    };
    assert.deepEqual(stream(fused, ["a ", " ", "b", "   "]), ["a", "", "  b", " ", ""]);
    assert.equal(stream(fused, ["a ", " ", "b", "   "]).join(""), "a  b ");
  });

  it("drops Metaspace's replacement throughout the first piece when it prepends, and not with never", () => {
    const meta = (prepend_scheme: string) => ({
      type: "Metaspace",
      replacement: "▁",
      prepend_scheme,
      split: true,
    });
    assert.equal(stream(meta("always"), ["▁▁a▁b", "▁c"]).join(""), "ab c");
    assert.equal(stream(meta("never"), ["▁a", "▁c"]).join(""), " a c");
    // A new stream after the flush starts again at its first piece.
    const d = decoder(meta("first"));
    assert.equal(d.push("▁a") + d.push("▁b") + d.flush(), "a b");
    assert.equal(d.push("▁a") + d.flush(), "a");
  });

  it("knows a ByteLevel decoder, and refuses what it cannot stream or run, naming the part", () => {
    assert.deepEqual(parseDecoder({ type: "ByteLevel" }).value, { kind: "byteLevel" });
    const ctc = parseDecoder({ type: "Sequence", decoders: [{ type: "CTC" }] });
    assert.equal(ctc.error?.code, Code.UNIMPLEMENTED);
    assert.match(ctc.error?.message ?? "", /^decoder\.decoders\[0\]\.type: CTC/);
    const afterFuse = parseDecoder({
      type: "Sequence",
      decoders: [{ type: "Fuse" }, { type: "ByteFallback" }],
    });
    assert.equal(afterFuse.error?.code, Code.UNIMPLEMENTED);
    const longPattern = parseDecoder({
      type: "Sequence",
      decoders: [{ type: "Fuse" }, { type: "Replace", pattern: { String: "ab" }, content: "" }],
    });
    assert.equal(longPattern.error?.code, Code.UNIMPLEMENTED);
    assert.equal(parseDecoder(null).error?.code, Code.UNIMPLEMENTED);
    assert.equal(parseDecoder({ type: "Strip", content: "ab" }).error?.code, Code.INVALID_ARGUMENT);
  });
});

describe("fallbackByte", () => {
  it("reads <0xHH> tokens only", () => {
    assert.equal(fallbackByte("<0x0A>"), 10);
    assert.equal(fallbackByte("<0xff>"), 255);
    for (const t of ["<0x0A", "<0xZZ>", "0x0A", "<0x0A>x", "<0x+A>"]) assert.equal(fallbackByte(t), -1, t);
  });
});

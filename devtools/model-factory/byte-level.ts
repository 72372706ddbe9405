// The GPT-2 byte-level scheme that the `ByteLevel` pre-tokenizer of Hugging Face tokenizers uses: text is
// split by the GPT-2 regex, each piece's UTF-8 bytes are mapped to printable characters (space → "Ġ",
// newline → "Ċ", ...), and BPE then works on those characters.

/** GPT-2's split pattern (`use_regex: true`). */
export const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** byte → printable character, as GPT-2's bytes_to_unicode(). */
export const BYTE_TO_CHAR: readonly string[] = buildByteToChar();

function buildByteToChar(): string[] {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) out.push(String.fromCodePoint(printable(b) ? b : next++));
  return out;
}

/** The 256 byte characters sorted by code point: the initial alphabet, in the order HF's trainer adds it. */
export const BYTE_ALPHABET: readonly string[] = [...BYTE_TO_CHAR].sort(
  (a, b) => a.codePointAt(0)! - b.codePointAt(0)!,
);

const utf8 = new TextEncoder();

/** A piece of text → its byte-level string. */
export function toByteLevel(piece: string): string {
  let s = "";
  for (const b of utf8.encode(piece)) s += BYTE_TO_CHAR[b]!;
  return s;
}

/** Splits text as the ByteLevel pre-tokenizer does (add_prefix_space false) into byte-level words. */
export function preTokenize(text: string): string[] {
  return (text.match(GPT2_SPLIT) ?? []).map(toByteLevel);
}

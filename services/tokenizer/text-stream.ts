// Incremental detokenization for streaming generation: the pushes and the flush, joined, equal
// Tokenizer.decode of all the ids, and no push ends in the middle of a character.
// - Byte-level tokenizers: a token can end in the middle of a UTF-8 character ("日" is three bytes that
//   BPE may spread over two tokens), so text is handed out only up to the last complete character; the
//   bytes after it wait for the next token. Invalid bytes become U+FFFD exactly where decode puts them.
// - SentencePiece-style tokenizers: the tokens go through the same piece decoder as decode (decoder.ts),
//   so the first piece loses its leading space exactly as in the full decode (Strip / Metaspace), and a
//   run of byte-fallback tokens ("<0xE2>" "<0x82>" "<0xAC>" = "€") is held until the token after it:
//   only then is it known whether the run is valid UTF-8 (its text) or not (one U+FFFD per byte).
// Unlike transformers' TextStreamer, which decodes the text since the last newline afresh (and so drops
// the space of a "▁word" that starts a line in Llama-2-style tokenizers), the stream never differs from
// the full decode, and it hands out text as soon as it is final rather than word by word.
import type { PieceDecoder } from "./decoder.ts";
import type { DecodeOptions, Tokenizer } from "./tokenizer.ts";
import { Utf8Stream } from "./utf8-stream.ts";

export class TextStream {
  readonly #tokenizer: Tokenizer;
  readonly #skipSpecialTokens: boolean;
  readonly #pieces: PieceDecoder | undefined;
  // Holds back an incomplete character and replaces invalid bytes as WHATWG's streaming decoder (and
  // Rust's from_utf8_lossy) does, maximal subparts; keeps a leading U+FEFF as decode does.
  readonly #utf8 = new Utf8Stream();

  constructor(tokenizer: Tokenizer, options: DecodeOptions = {}) {
    this.#tokenizer = tokenizer;
    this.#skipSpecialTokens = options.skipSpecialTokens === true;
    this.#pieces = tokenizer.newPieceDecoder();
  }

  /** The text that this token completes (maybe ""). Throws INVALID_ARGUMENT on a negative or non-integer id. */
  push(tokenId: number): string {
    if (this.#pieces !== undefined) {
      const token = this.#tokenizer.checkedToken(tokenId);
      if (token === undefined || (this.#skipSpecialTokens && this.#tokenizer.isSpecialToken(tokenId)))
        return "";
      return this.#pieces.push(token);
    }
    const bytes = this.#tokenizer.tokenBytes(tokenId);
    if (this.#skipSpecialTokens && this.#tokenizer.isSpecialToken(tokenId)) return "";
    return this.#utf8.push(bytes);
  }

  /** The rest: bytes of an unfinished character become U+FFFD. The stream can then start anew. */
  flush(): string {
    return this.#pieces !== undefined ? this.#pieces.flush() : this.#utf8.flush();
  }
}

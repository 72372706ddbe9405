// Incremental detokenization for streaming generation. A byte-level token can end in the middle of a
// UTF-8 character ("日" is three bytes that BPE may spread over two tokens), so text is handed out only
// up to the last complete character; the bytes after it wait for the next token. Invalid bytes become
// U+FFFD exactly where Tokenizer.decode would put them, so the pushes and the flush, joined, equal
// decode() of all the ids.
import type { DecodeOptions, Tokenizer } from "./tokenizer.ts";

export class TextStream {
  readonly #tokenizer: Tokenizer;
  readonly #skipSpecialTokens: boolean;
  // WHATWG's streaming UTF-8 decoder holds back an incomplete character and replaces invalid bytes as
  // Rust's from_utf8_lossy does (maximal subparts); ignoreBOM keeps a leading U+FEFF as decode does.
  readonly #utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

  constructor(tokenizer: Tokenizer, options: DecodeOptions = {}) {
    this.#tokenizer = tokenizer;
    this.#skipSpecialTokens = options.skipSpecialTokens === true;
  }

  /** The text that this token completes (maybe ""). Throws INVALID_ARGUMENT on a negative or non-integer id. */
  push(tokenId: number): string {
    const bytes = this.#tokenizer.tokenBytes(tokenId);
    if (this.#skipSpecialTokens && this.#tokenizer.isSpecialToken(tokenId)) return "";
    return this.#utf8.decode(bytes, { stream: true });
  }

  /** The rest: bytes of an unfinished character become U+FFFD. The stream can then start anew. */
  flush(): string {
    return this.#utf8.decode();
  }
}

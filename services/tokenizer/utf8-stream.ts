// Streaming UTF-8 decoding, as WHATWG's TextDecoder with {stream: true} decodes (an incomplete character
// at a chunk's end waits for the next chunk; invalid bytes become U+FFFD, one per maximal subpart), without
// its allocations. Node 24's TextDecoder copies each chunk's unfinished tail into a new Buffer and merges
// it into the next chunk in another new array. A V8 allocation profile of the router at 64 concurrent
// streams showed those as its only per-token array allocations, and without them the time each
// scavenge spends sweeping young ArrayBuffers fell from ~0.83 to ~0.63 ms (issue 22; gc-probe runs).
// Here an unfinished character's bytes (at most three) wait packed in a number, a character completed
// across chunks is built in JS, and only whole characters reach TextDecoder (non-streaming, so one
// decoder serves every stream): a stream is two numbers, nothing else per request.

// ignoreBOM: a leading U+FEFF is text, as Tokenizer.decode keeps it.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

export class Utf8Stream {
  /** The unfinished character's bytes so far, the first in the lowest 8 bits. */
  #pending = 0;
  #pendingLength = 0;

  /** The text of the characters `bytes` completes; the bytes of one it leaves unfinished wait. */
  push(bytes: Uint8Array): string {
    let out = "";
    let start = 0;
    if (this.#pendingLength > 0) {
      const lead = this.#pending & 0xff;
      const length = sequenceLength(lead);
      while (this.#pendingLength < length && start < bytes.length) {
        const b = bytes[start]!;
        if (!(this.#pendingLength === 1 ? validSecond(lead, b) : isContinuation(b))) break;
        this.#pending |= b << (8 * this.#pendingLength++);
        start++;
      }
      if (this.#pendingLength === length) {
        out = String.fromCodePoint(codePoint(this.#pending, length));
        this.#pendingLength = 0;
      } else if (start === bytes.length) {
        return "";
      } else {
        // A byte that cannot go on the character: one U+FFFD for what came before it, and the byte is
        // read again as the start of what follows.
        out = "\uFFFD";
        this.#pendingLength = 0;
      }
    }
    const tail = unfinishedTail(bytes, start);
    const end = bytes.length - tail;
    if (tail > 0) {
      this.#pending = 0;
      for (let i = end; i < bytes.length; i++) this.#pending |= bytes[i]! << (8 * this.#pendingLength++);
    }
    if (end > start)
      out += decoder.decode(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
    return out;
  }

  /** U+FFFD for an unfinished character (as a final decode gives), or ""; the stream can start anew. */
  flush(): string {
    if (this.#pendingLength === 0) return "";
    this.#pendingLength = 0;
    return "\uFFFD";
  }
}

/** Bytes a sequence led by `lead` has: 2-4, or 0 where `lead` cannot start one (ASCII counts as 0). */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

function isContinuation(b: number): boolean {
  return b >= 0x80 && b <= 0xbf;
}

/** WHATWG's bounds on a sequence's second byte: no overlong forms, surrogates or code points past U+10FFFF. */
function validSecond(lead: number, b: number): boolean {
  if (lead === 0xe0) return b >= 0xa0 && b <= 0xbf;
  if (lead === 0xed) return b >= 0x80 && b <= 0x9f;
  if (lead === 0xf0) return b >= 0x90 && b <= 0xbf;
  if (lead === 0xf4) return b >= 0x80 && b <= 0x8f;
  return isContinuation(b);
}

/**
 * How many bytes at the end of `bytes` (from `from` on) start a valid character that has not ended: the
 * bytes a streaming decoder holds back. 0 where the end is whole, or broken (decoded as U+FFFD now).
 */
function unfinishedTail(bytes: Uint8Array, from: number): number {
  const end = bytes.length;
  for (let i = end - 1; i >= from && i >= end - 3; i--) {
    const b = bytes[i]!;
    if (isContinuation(b)) continue;
    const length = sequenceLength(b);
    if (length <= end - i) return 0;
    if (i + 1 < end && !validSecond(b, bytes[i + 1]!)) return 0;
    return end - i;
  }
  return 0;
}

/** The code point of a whole sequence packed as `#pending` packs it (the first byte lowest). */
function codePoint(packed: number, length: number): number {
  const byte = (i: number) => (packed >>> (8 * i)) & 0xff;
  if (length === 2) return ((byte(0) & 0x1f) << 6) | (byte(1) & 0x3f);
  if (length === 3) return ((byte(0) & 0x0f) << 12) | ((byte(1) & 0x3f) << 6) | (byte(2) & 0x3f);
  return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3f) << 12) | ((byte(2) & 0x3f) << 6) | (byte(3) & 0x3f);
}

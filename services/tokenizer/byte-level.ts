// GPT-2's byte-level alphabet: every byte 0..255 is shown as one printable Unicode character, so that a
// byte-level BPE vocabulary holds only printable strings ("Ġ" is the byte 0x20, a space). The tokenizer
// reads vocabularies with it; the model factory's BPE trainer (devtools/model-factory) writes them with it.

/** `BYTE_TO_CHAR[b]` is the character that stands for byte `b` in vocabulary strings. */
export const BYTE_TO_CHAR: readonly string[] = buildAlphabet();

const CHAR_TO_BYTE = new Map<string, number>(BYTE_TO_CHAR.map((c, b) => [c, b]));
const utf8 = new TextEncoder();

function buildAlphabet(): string[] {
  const chars: string[] = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    chars[b] = String.fromCharCode(printable ? b : 256 + extra++);
  }
  return chars;
}

/** The vocabulary string of some bytes, e.g. the UTF-8 bytes of " é" give "ĠÃ©". */
export function bytesToByteLevel(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += BYTE_TO_CHAR[b];
  return s;
}

/**
 * The bytes a vocabulary string stands for, as Hugging Face's ByteLevel decoder reads it: each character
 * maps back to its byte; a string with any character outside the alphabet (an added token such as
 * "<|im_start|>" written in other characters) is taken as its own UTF-8 instead.
 */
export function byteLevelToBytes(token: string): Uint8Array {
  const out = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const b = CHAR_TO_BYTE.get(token[i]!);
    if (b === undefined) return utf8.encode(token);
    out[i] = b;
  }
  return out;
}

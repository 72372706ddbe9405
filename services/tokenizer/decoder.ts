// tokenizer.json "decoder": how token strings become text. Two kinds:
// - ByteLevel (GPT-2, Llama 3, Qwen): each token string maps back to bytes (byte-level.ts); the
//   tokenizer turns ids into bytes and UTF-8-decodes them, see Tokenizer.decode and TextStream.
// - a chain of piece steps (SentencePiece-style BPE: Llama 2, Mistral, Mixtral, Gemma): Replace ("▁" →
//   " "), ByteFallback ("<0xE2>" "<0x82>" "<0xAC>" → "€"), Fuse, Strip, Metaspace, in any order that
//   Hugging Face's Sequence decoder allows. Every step here works on a stream of pieces, so the same code
//   decodes a whole id list and streams one (decode = push every token, then flush): a stream and the
//   full decode cannot differ. The steps follow Hugging Face tokenizers 0.23 (decoders/*.rs) exactly:
//   Replace and Strip act on each piece, Metaspace drops the replacement character throughout the
//   first piece (when it prepends) and makes it a space elsewhere, ByteFallback turns a run of byte
//   tokens into its UTF-8 text or, when the run is not valid UTF-8, into one U+FFFD per byte (so a run
//   is held until the token after it, or the end, shows it is over), and after Fuse the pieces are one
//   text, which a following Strip trims at its very start and end only.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";

/** Turns pieces into pieces, one at a time; `flush` ends the stream (and readies it for a new one). */
interface Step {
  push(piece: string, out: string[]): void;
  flush(out: string[]): void;
}

/** Makes the steps of one stream. */
type StepFactory = () => Step;

export type DecoderSpec = { kind: "byteLevel" } | { kind: "pieces"; steps: readonly StepFactory[] };

/** A stream of token strings in, text out. */
export class PieceDecoder {
  readonly #steps: Step[];
  #a: string[] = [];
  #b: string[] = [];

  constructor(steps: readonly StepFactory[]) {
    this.#steps = steps.map((make) => make());
  }

  /** The text this token string completes (maybe ""). */
  push(token: string): string {
    const pieces = this.#a;
    pieces.length = 0;
    pieces.push(token);
    return this.#run(pieces, 0, false);
  }

  /** The text still held (a pending byte run, trailing characters a Strip may cut). */
  flush(): string {
    const pieces = this.#a;
    pieces.length = 0;
    return this.#run(pieces, 0, true);
  }

  #run(input: string[], from: number, flushing: boolean): string {
    let pieces = input;
    for (let i = from; i < this.#steps.length; i++) {
      const out = pieces === this.#a ? this.#b : this.#a;
      out.length = 0;
      const step = this.#steps[i]!;
      for (const p of pieces) step.push(p, out);
      if (flushing) step.flush(out);
      pieces = out;
    }
    return pieces.length === 1 ? pieces[0]! : pieces.join("");
  }
}

/** Parses a "decoder" value. */
export function parseDecoder(json: unknown, field = "decoder"): Result<DecoderSpec> {
  if (!isObject(json)) return unsupported(field, "a decoder is required");
  if (typeOf(json) === "ByteLevel") return { value: { kind: "byteLevel" } };
  const items = typeOf(json) === "Sequence" ? json["decoders"] : [json];
  if (!Array.isArray(items)) return invalid(`${field}.decoders`, "must be an array");
  const steps: StepFactory[] = [];
  let fused = false;
  for (const [i, item] of items.entries()) {
    const at = typeOf(json) === "Sequence" ? `${field}.decoders[${i}]` : field;
    if (!isObject(item)) return invalid(at, "must be an object");
    const type = typeOf(item);
    if (type === "Fuse") {
      // Pieces are joined from here on; what comes after sees one text, in chunks.
      fused = true;
      continue;
    }
    const step = parseStep(item, at, fused);
    if (step.error) return step;
    steps.push(step.value);
  }
  return { value: { kind: "pieces", steps } };
}

function parseStep(json: Record<string, unknown>, field: string, fused: boolean): Result<StepFactory> {
  const type = typeOf(json);
  switch (type) {
    case "Replace": {
      const pattern = json["pattern"];
      const content = json["content"];
      if (!isObject(pattern) || typeof pattern["String"] !== "string" || pattern["String"] === "") {
        return unsupported(`${field}.pattern`, 'only {"String": non-empty string} is supported');
      }
      if (typeof content !== "string") return invalid(`${field}.content`, "must be a string");
      const from = pattern["String"];
      // After Fuse the text comes in chunks: a pattern of one character cannot straddle two.
      if (fused && [...from].length !== 1) {
        return unsupported(
          `${field}.pattern`,
          "a pattern longer than one character after Fuse is not supported",
        );
      }
      const step: Step = { push: (p, out) => void out.push(p.replaceAll(from, content)), flush: () => {} };
      return { value: () => step };
    }
    case "Strip": {
      const content = json["content"];
      const start = json["start"] ?? 0;
      const stop = json["stop"] ?? 0;
      if (typeof content !== "string" || [...content].length !== 1)
        return invalid(`${field}.content`, "must be one character");
      if (!Number.isSafeInteger(start) || (start as number) < 0)
        return invalid(`${field}.start`, "must be an integer >= 0");
      if (!Number.isSafeInteger(stop) || (stop as number) < 0)
        return invalid(`${field}.stop`, "must be an integer >= 0");
      if (!fused) {
        const step: Step = {
          push: (p, out) => void out.push(stripPiece(p, content, start as number, stop as number)),
          flush: () => {},
        };
        return { value: () => step };
      }
      return { value: () => new FusedStrip(content, start as number, stop as number) };
    }
    case "ByteFallback":
      if (fused) return unsupported(field, "ByteFallback after Fuse is not supported");
      return { value: () => new ByteFallback() };
    case "Metaspace": {
      if (fused) return unsupported(field, "Metaspace after Fuse is not supported");
      const replacement = json["replacement"] ?? "▁";
      if (typeof replacement !== "string" || [...replacement].length !== 1)
        return invalid(`${field}.replacement`, "must be one character");
      const scheme = prependScheme(json, field);
      if (scheme.error) return scheme;
      const dropFirst = scheme.value !== "never";
      return { value: () => new MetaspaceDecoder(replacement, dropFirst) };
    }
    case "ByteLevel":
      return unsupported(field, "ByteLevel is supported only as the whole decoder");
    default:
      return unsupported(`${field}.type`, `${String(type)} is not supported`);
  }
}

export type PrependScheme = "first" | "always" | "never";

/** Metaspace's prepend_scheme, or the add_prefix_space of older files. */
export function prependScheme(json: Record<string, unknown>, field: string): Result<PrependScheme> {
  const scheme = json["prepend_scheme"];
  if (scheme === undefined || scheme === null) {
    return { value: json["add_prefix_space"] === false ? "never" : "always" };
  }
  if (scheme !== "first" && scheme !== "always" && scheme !== "never") {
    return invalid(`${field}.prepend_scheme`, "must be first, always or never");
  }
  return { value: scheme };
}

/** Strip on one piece: up to `start` leading and `stop` trailing `content` characters. */
function stripPiece(piece: string, content: string, start: number, stop: number): string {
  let from = 0;
  for (let n = 0; n < start && piece.startsWith(content, from); n++) from += content.length;
  let to = piece.length;
  for (let n = 0; n < stop && to - content.length >= from && piece.endsWith(content, to); n++) {
    to -= content.length;
  }
  return from === 0 && to === piece.length ? piece : piece.slice(from, to);
}

/** Strip after Fuse: the start and end of the whole text, which arrives in chunks. */
class FusedStrip implements Step {
  readonly #content: string;
  readonly #start: number;
  readonly #stop: number;
  #stripped = 0; // leading characters cut so far
  #started = false; // a character that is not `content` has been seen
  #held = ""; // trailing `content` characters that the end may still cut

  constructor(content: string, start: number, stop: number) {
    this.#content = content;
    this.#start = start;
    this.#stop = stop;
  }

  push(chunk: string, out: string[]): void {
    let text = chunk;
    if (!this.#started) {
      let from = 0;
      while (this.#stripped < this.#start && text.startsWith(this.#content, from)) {
        from += this.#content.length;
        this.#stripped++;
      }
      text = text.slice(from);
      if (text === "") return;
      this.#started = true;
    }
    if (this.#stop === 0) {
      out.push(text);
      return;
    }
    // Hold back the trailing run of `content` characters (up to `stop` of them).
    text = this.#held + text;
    let to = text.length;
    for (let n = 0; n < this.#stop && text.endsWith(this.#content, to); n++) to -= this.#content.length;
    this.#held = text.slice(to);
    out.push(text.slice(0, to));
  }

  flush(): void {
    // What is held is exactly what the end strips.
    this.#stripped = 0;
    this.#started = false;
    this.#held = "";
  }
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A token "<0xHH>": its byte, else -1 (Rust's from_str_radix on the two hex digits). */
export function fallbackByte(token: string): number {
  if (token.length !== 6 || !token.startsWith("<0x") || token.charCodeAt(5) !== 62) return -1;
  const hex = token.slice(3, 5);
  return /^[0-9a-fA-F]{2}$/.test(hex) ? Number.parseInt(hex, 16) : -1;
}

class ByteFallback implements Step {
  #run: number[] = [];

  push(piece: string, out: string[]): void {
    const b = fallbackByte(piece);
    if (b >= 0) {
      this.#run.push(b);
      return;
    }
    this.flush(out);
    out.push(piece);
  }

  flush(out: string[]): void {
    if (this.#run.length === 0) return;
    try {
      out.push(utf8Strict.decode(Uint8Array.from(this.#run)));
    } catch {
      for (let i = 0; i < this.#run.length; i++) out.push("\ufffd");
    }
    this.#run = [];
  }
}

class MetaspaceDecoder implements Step {
  readonly #replacement: string;
  readonly #dropFirst: boolean;
  #index = 0;

  constructor(replacement: string, dropFirst: boolean) {
    this.#replacement = replacement;
    this.#dropFirst = dropFirst;
  }

  push(piece: string, out: string[]): void {
    const first = this.#index++ === 0;
    out.push(piece.replaceAll(this.#replacement, first && this.#dropFirst ? "" : " "));
  }

  flush(): void {
    this.#index = 0;
  }
}

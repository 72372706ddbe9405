// tokenizer.json "pre_tokenizer": cuts text into the words that BPE then encodes one by one. Supported:
// ByteLevel (GPT-2: optional prefix space, optional GPT-2 regex split) and Split (a regex or a string,
// with any of Hugging Face's delimiter behaviors), alone or as a Sequence that ends with ByteLevel, as in
// the Llama-3 and Qwen2 tokenizers. The byte-level mapping itself is left to the BPE model.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";
import { compileOnigRegex } from "./onig-regex.ts";

/** Cuts one text (a part of the input between added tokens) into words, in order. */
export type PreTokenizer = (text: string) => string[];

/** Turns one piece into its sub-pieces, appended to `out`. */
type Step = (piece: string, out: string[]) => void;

export const GPT2_PATTERN = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
const BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"] as const;
type Behavior = (typeof BEHAVIORS)[number];

/** Parses a "pre_tokenizer" value. Byte-level BPE needs a ByteLevel step, and it must come last. */
export function parsePreTokenizer(json: unknown): Result<PreTokenizer> {
  const field = "pre_tokenizer";
  if (!isObject(json)) return unsupported(field, "a ByteLevel pre-tokenizer is required (byte-level BPE)");
  const items = typeOf(json) === "Sequence" ? json["pretokenizers"] : [json];
  if (!Array.isArray(items)) return invalid(`${field}.pretokenizers`, "must be an array");
  const steps: Step[] = [];
  for (const [i, item] of items.entries()) {
    const at = typeOf(json) === "Sequence" ? `${field}.pretokenizers[${i}]` : field;
    const step = parseStep(item, at);
    if (step.error) return step;
    const isByteLevel = isObject(item) && typeOf(item) === "ByteLevel";
    if (isByteLevel !== (i === items.length - 1)) {
      return unsupported(at, "only a sequence whose one ByteLevel step comes last is supported");
    }
    steps.push(step.value);
  }
  return {
    value: (text) => {
      let pieces = [text];
      for (const step of steps) {
        const out: string[] = [];
        for (const piece of pieces) step(piece, out);
        pieces = out;
      }
      return pieces;
    },
  };
}

function parseStep(json: unknown, field: string): Result<Step> {
  if (!isObject(json)) return invalid(field, "must be an object");
  const type = typeOf(json);
  if (type === "ByteLevel") {
    const prefixSpace = json["add_prefix_space"] === true;
    const split = json["use_regex"] === false ? undefined : compileOnigRegex(GPT2_PATTERN).value!;
    return {
      value: (piece, out) => {
        const text = prefixSpace && !piece.startsWith(" ") ? ` ${piece}` : piece;
        if (split === undefined) out.push(text);
        else splitPiece(text, split, "Isolated", false, out);
      },
    };
  }
  if (type === "Split") {
    const pattern = json["pattern"];
    let matcher: RegExp | string;
    if (isObject(pattern) && typeof pattern["Regex"] === "string") {
      const re = compileOnigRegex(pattern["Regex"]);
      if (re.error) return re;
      matcher = re.value;
    } else if (isObject(pattern) && typeof pattern["String"] === "string" && pattern["String"] !== "") {
      matcher = pattern["String"];
    } else return invalid(`${field}.pattern`, 'must be {"Regex": string} or {"String": non-empty string}');
    const behavior = json["behavior"];
    if (!BEHAVIORS.includes(behavior as Behavior)) {
      return invalid(`${field}.behavior`, `must be one of ${BEHAVIORS.join(", ")}`);
    }
    const invert = json["invert"] === true;
    return { value: (piece, out) => splitPiece(piece, matcher, behavior as Behavior, invert, out) };
  }
  return unsupported(`${field}.type`, `${String(type)} is not supported`);
}

/** Hugging Face's NormalizedString::split: cut at the matches of `matcher`, keeping them as `behavior` says. */
export function splitPiece(
  text: string,
  matcher: RegExp | string,
  behavior: Behavior,
  invert: boolean,
  out: string[],
): void {
  // Alternating spans [start, end, isMatch], gaps included, covering the text.
  const spans: number[] = [];
  let prev = 0;
  const add = (start: number, end: number) => {
    if (prev < start) spans.push(prev, start, invert ? 1 : 0);
    spans.push(start, end, invert ? 0 : 1);
    prev = end;
  };
  if (typeof matcher === "string") {
    for (let at = text.indexOf(matcher); at >= 0; at = text.indexOf(matcher, at + matcher.length)) {
      add(at, at + matcher.length);
    }
  } else {
    for (const m of text.matchAll(matcher)) if (m[0] !== "") add(m.index, m.index + m[0].length);
  }
  if (prev < text.length) spans.push(prev, text.length, invert ? 1 : 0);

  if (behavior === "Isolated" || behavior === "Removed") {
    for (let i = 0; i < spans.length; i += 3) {
      if (behavior === "Isolated" || spans[i + 2] === 0) out.push(text.slice(spans[i], spans[i + 1]));
    }
    return;
  }
  // Merging behaviors: fold spans into [start, end] pieces.
  const pieces: number[] = [];
  let previousMatch = false;
  if (behavior === "MergedWithNext") {
    for (let i = spans.length - 3; i >= 0; i -= 3) {
      const isMatch = spans[i + 2] === 1;
      if (isMatch && !previousMatch && pieces.length > 0) pieces[pieces.length - 2] = spans[i]!;
      else pieces.push(spans[i]!, spans[i + 1]!);
      previousMatch = isMatch;
    }
    for (let i = pieces.length - 2; i >= 0; i -= 2) out.push(text.slice(pieces[i], pieces[i + 1]));
    return;
  }
  for (let i = 0; i < spans.length; i += 3) {
    const isMatch = spans[i + 2] === 1;
    const merge = behavior === "Contiguous" ? isMatch === previousMatch : isMatch && !previousMatch;
    if (merge && pieces.length > 0) pieces[pieces.length - 1] = spans[i + 1]!;
    else pieces.push(spans[i]!, spans[i + 1]!);
    previousMatch = isMatch;
  }
  for (let i = 0; i < pieces.length; i += 2) out.push(text.slice(pieces[i], pieces[i + 1]));
}

// tokenizer.json "pre_tokenizer": cuts text into the words that BPE then encodes one by one. Supported:
// ByteLevel (GPT-2: optional prefix space, optional GPT-2 regex split), Split (a regex or a string, with
// any of Hugging Face's delimiter behaviors) and Metaspace (SentencePiece: spaces become "▁", a "▁" is
// prepended as prepend_scheme says, optional split before each "▁"), alone or in a Sequence; a ByteLevel
// step must come last (the byte-level mapping itself is left to the BPE model). No pre-tokenizer (null)
// leaves each part of the input whole, as Llama-2-style tokenizer.json files have it.
import type { Result } from "../kernel/errors.ts";
import { type PrependScheme, prependScheme } from "./decoder.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";
import { compileOnigRegex } from "./onig-regex.ts";

/**
 * Cuts one text (a part of the input between added tokens) into words, in order. `atStart` says whether
 * the text begins the input (offset 0), which Metaspace's prepend_scheme "first" asks; default true.
 */
export type PreTokenizer = (text: string, atStart?: boolean) => string[];

/** Turns one piece into its sub-pieces, appended to `out`; `first` when the piece begins the input. */
type Step = (piece: string, out: string[], first: boolean) => void;

export const GPT2_PATTERN = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
const BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"] as const;
type Behavior = (typeof BEHAVIORS)[number];

/** Whether this "pre_tokenizer" maps words to byte-level strings (its last step is ByteLevel). */
export function isByteLevel(json: unknown): boolean {
  if (!isObject(json)) return false;
  if (typeOf(json) === "ByteLevel") return true;
  const items = typeOf(json) === "Sequence" ? json["pretokenizers"] : undefined;
  return (
    Array.isArray(items) && items.length > 0 && isObject(items.at(-1)) && typeOf(items.at(-1)) === "ByteLevel"
  );
}

/** Parses a "pre_tokenizer" value. A ByteLevel step must come last. */
export function parsePreTokenizer(json: unknown): Result<PreTokenizer> {
  const field = "pre_tokenizer";
  if (json === null || json === undefined) return { value: (text) => (text === "" ? [] : [text]) };
  if (!isObject(json)) return invalid(field, "must be an object or null");
  const items = typeOf(json) === "Sequence" ? json["pretokenizers"] : [json];
  if (!Array.isArray(items)) return invalid(`${field}.pretokenizers`, "must be an array");
  const steps: Step[] = [];
  for (const [i, item] of items.entries()) {
    const at = typeOf(json) === "Sequence" ? `${field}.pretokenizers[${i}]` : field;
    const step = parseStep(item, at);
    if (step.error) return step;
    const isByteLevelStep = isObject(item) && typeOf(item) === "ByteLevel";
    if (isByteLevelStep && i !== items.length - 1) {
      return unsupported(at, "a ByteLevel step is supported only as the last one");
    }
    steps.push(step.value);
  }
  if (steps.length === 1) {
    const only = steps[0]!;
    return {
      value: (text, atStart = true) => {
        const out: string[] = [];
        only(text, out, atStart);
        return out;
      },
    };
  }
  return {
    value: (text, atStart = true) => {
      let pieces = [text];
      for (const step of steps) {
        const out: string[] = [];
        for (let i = 0; i < pieces.length; i++) step(pieces[i]!, out, atStart && i === 0);
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
  if (type === "Metaspace") {
    const replacement = json["replacement"] ?? "▁";
    if (typeof replacement !== "string" || [...replacement].length !== 1)
      return invalid(`${field}.replacement`, "must be one character");
    const scheme = prependScheme(json, field);
    if (scheme.error) return scheme;
    const split = json["split"] !== false;
    return { value: metaspace(replacement, scheme.value, split) };
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

/** Hugging Face's Metaspace pre-tokenizer on one piece. */
function metaspace(replacement: string, scheme: PrependScheme, split: boolean): Step {
  return (piece, out, first) => {
    let text = piece.replaceAll(" ", replacement);
    if (!text.startsWith(replacement) && (scheme === "always" || (scheme === "first" && first))) {
      text = replacement + text;
    }
    if (!split) out.push(text);
    else splitPiece(text, replacement, "MergedWithNext", false, out);
  };
}

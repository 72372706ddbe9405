// tokenizer.json "added_tokens": strings such as "<s>" or "<|im_start|>" that are found in the text
// before anything else runs and become their id directly. As in Hugging Face's AddedVocabulary: the
// leftmost, then longest, match wins; single_word, lstrip and rstrip are honored; tokens marked
// `normalized` are looked for after normalization, the others in the raw text.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject } from "./json-fields.ts";

export interface AddedToken {
  readonly id: number;
  readonly content: string;
  /** Skipped by decode when asked to skip special tokens. */
  readonly special: boolean;
  readonly singleWord: boolean;
  readonly lstrip: boolean;
  readonly rstrip: boolean;
  readonly normalized: boolean;
}

/** A part of the input: text still to encode, or the id of an added token found there. */
export type Segment = string | number;

export function parseAddedTokens(json: unknown): Result<AddedToken[]> {
  if (json === undefined || json === null) return { value: [] };
  if (!Array.isArray(json)) return invalid("added_tokens", "must be an array");
  const tokens: AddedToken[] = [];
  for (const [i, t] of json.entries()) {
    const field = `added_tokens[${i}]`;
    if (!isObject(t)) return invalid(field, "must be an object");
    const id = t["id"];
    const content = t["content"];
    if (!Number.isSafeInteger(id) || (id as number) < 0)
      return invalid(`${field}.id`, "must be an integer >= 0");
    if (typeof content !== "string" || content === "")
      return invalid(`${field}.content`, "must be a non-empty string");
    tokens.push({
      id: id as number,
      content,
      special: t["special"] === true,
      singleWord: t["single_word"] === true,
      lstrip: t["lstrip"] === true,
      rstrip: t["rstrip"] === true,
      normalized: t["normalized"] === true,
    });
  }
  return { value: tokens };
}

/** Rust's char::is_whitespace and the regex crate's \w, on one character. */
const SPACE = /^[\t-\r\x85\p{Z}]$/v;
const WORD = /^[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]$/v;

/** Finds a set of added tokens in text. */
export class AddedTokenMatcher {
  readonly #byContent: Map<string, AddedToken>;
  readonly #pattern: RegExp | undefined;

  constructor(tokens: readonly AddedToken[]) {
    this.#byContent = new Map(tokens.map((t) => [t.content, t]));
    const longestFirst = [...this.#byContent.keys()].sort((a, b) => b.length - a.length);
    this.#pattern =
      longestFirst.length === 0 ? undefined : new RegExp(longestFirst.map(escapeLiteral).join("|"), "gv");
  }

  /**
   * Cuts `text` at the added tokens in it and appends the parts to `out`. With `skipSpecial`, special
   * tokens are not looked for, so "<s>" typed by a user stays text.
   */
  split(text: string, skipSpecial: boolean, out: Segment[]): void {
    if (this.#pattern === undefined) {
      if (text !== "") out.push(text);
      return;
    }
    let done = 0; // text before this offset has been handed out
    for (const m of text.matchAll(this.#pattern)) {
      const token = this.#byContent.get(m[0])!;
      if (skipSpecial && token.special) continue;
      let start = m.index;
      let end = start + m[0].length;
      if (token.singleWord && (WORD.test(charBefore(text, start)) || WORD.test(charAt(text, end)))) continue;
      if (token.lstrip) {
        while (start > done && SPACE.test(charBefore(text, start))) start -= charBefore(text, start).length;
      }
      if (token.rstrip) while (SPACE.test(charAt(text, end))) end += charAt(text, end).length;
      if (done < start) out.push(text.slice(done, start));
      out.push(token.id);
      done = end;
    }
    if (done < text.length) out.push(text.slice(done));
  }
}

function escapeLiteral(literal: string): string {
  return literal.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/** The character (code point) that starts at `i`, or "" at the end. */
function charAt(text: string, i: number): string {
  const c = text.codePointAt(i);
  return c === undefined ? "" : String.fromCodePoint(c);
}

/** The character (code point) that ends at `i`, or "" at the start. */
function charBefore(text: string, i: number): string {
  if (i <= 0) return "";
  const pair = i >= 2 ? text.codePointAt(i - 2)! : 0;
  return pair > 0xffff ? String.fromCodePoint(pair) : text.charAt(i - 1);
}

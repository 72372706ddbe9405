// The matcher we would write ourselves, for bench/suites/structured.ts to measure xgrammar against: a
// character-level recognizer of JSON prefixes (any JSON object: OpenAI's json_object) whose mask for
// the next token is found the direct way, by running every vocabulary entry's text from the current
// state. It is what a grammar engine without precomputation does per token; xgrammar's compiler
// instead classifies most tokens per grammar position ahead of time.

type Mode =
  | "start"
  | "value"
  | "keyOrEnd"
  | "key"
  | "colon"
  | "after"
  | "valueOrEnd"
  | "string"
  | "escape"
  | "unicode"
  | "number"
  | "literal"
  | "done";

/** The recognizer's whole state: small, copied for each vocabulary entry tried. */
export interface JsonState {
  mode: Mode;
  /** Open containers, innermost last: "{" or "[". */
  stack: string;
  /** In a string: whether it is an object key. */
  inKey: boolean;
  /** Hex digits left of a \u escape, or the rest of a literal (true, false, null). */
  rest: string;
  /** The number so far (checked by pattern when it ends). */
  num: string;
}

export const initialJson = (): JsonState => ({ mode: "start", stack: "", inKey: false, rest: "", num: "" });

const WS = new Set([" ", "\t", "\n", "\r"]);
const NUMBER_CHARS = /[0-9+\-.eE]/;
const NUMBER_PREFIX = /^-?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][+-]?[0-9]*)?$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** Feeds one character; false when the text so far can no longer be a prefix of a JSON object. */
export function feed(s: JsonState, c: string): boolean {
  switch (s.mode) {
    case "start":
      if (WS.has(c)) return true;
      if (c !== "{") return false;
      s.stack += "{";
      s.mode = "keyOrEnd";
      return true;
    case "value":
    case "valueOrEnd":
      if (WS.has(c)) return true;
      if (c === "]" && s.mode === "valueOrEnd") return close(s, "[");
      return startValue(s, c);
    case "keyOrEnd":
    case "key":
      if (WS.has(c)) return true;
      if (c === "}" && s.mode === "keyOrEnd") return close(s, "{");
      if (c !== '"') return false;
      s.mode = "string";
      s.inKey = true;
      return true;
    case "colon":
      if (WS.has(c)) return true;
      if (c !== ":") return false;
      s.mode = "value";
      return true;
    case "after":
      if (WS.has(c)) return true;
      if (c === ",") {
        s.mode = s.stack.endsWith("{") ? "key" : "value";
        return true;
      }
      if (c === "}") return close(s, "{");
      if (c === "]") return close(s, "[");
      return false;
    case "string":
      if (c === '"') {
        s.mode = s.inKey ? "colon" : "after";
        s.inKey = false;
        return true;
      }
      if (c === "\\") s.mode = "escape";
      return c >= " ";
    case "escape":
      if (c === "u") {
        s.mode = "unicode";
        s.rest = "xxxx";
        return true;
      }
      s.mode = "string";
      return '"\\/bfnrt'.includes(c);
    case "unicode":
      if (!/[0-9a-fA-F]/.test(c)) return false;
      s.rest = s.rest.slice(1);
      if (s.rest === "") s.mode = "string";
      return true;
    case "number":
      if (NUMBER_CHARS.test(c)) {
        s.num += c;
        return NUMBER_PREFIX.test(s.num);
      }
      if (!NUMBER.test(s.num)) return false;
      s.mode = "after";
      return feed(s, c);
    case "literal":
      if (c !== s.rest[0]) return false;
      s.rest = s.rest.slice(1);
      if (s.rest === "") s.mode = "after";
      return true;
    case "done":
      return false;
  }
}

function startValue(s: JsonState, c: string): boolean {
  if (c === "{") {
    s.stack += "{";
    s.mode = "keyOrEnd";
  } else if (c === "[") {
    s.stack += "[";
    s.mode = "valueOrEnd";
  } else if (c === '"') {
    s.mode = "string";
  } else if (c === "-" || (c >= "0" && c <= "9")) {
    s.mode = "number";
    s.num = c;
  } else if (c === "t" || c === "f" || c === "n") {
    s.mode = "literal";
    s.rest = c === "t" ? "rue" : c === "f" ? "alse" : "ull";
  } else return false;
  return true;
}

function close(s: JsonState, open: string): boolean {
  if (!s.stack.endsWith(open)) return false;
  s.stack = s.stack.slice(0, -1);
  s.mode = s.stack === "" ? "done" : "after";
  return true;
}

/** Fills `mask` (xgrammar's layout) with the tokens whose text keeps `state` a JSON prefix; eos where it is done. */
export function naiveMask(
  state: JsonState,
  texts: readonly string[],
  eos: readonly number[],
  mask: Int32Array,
): void {
  mask.fill(0);
  for (let id = 0; id < texts.length; id++) {
    const text = texts[id]!;
    if (text === "") continue;
    const s = { ...state };
    let ok = true;
    for (const c of text) {
      if (!feed(s, c)) {
        ok = false;
        break;
      }
    }
    if (ok) mask[id >> 5]! |= 1 << (id & 31);
  }
  if (state.mode === "done") for (const id of eos) mask[id >> 5]! |= 1 << (id & 31);
}

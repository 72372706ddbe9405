// One JSON object of a tool call, read as far as the model has written it: the call's name once its
// string is closed, and where its arguments value starts (and ends, once it has). Tool-call parsers
// re-read the whole output on every delta, so what they stream is always a prefix of what they return
// at the end: the arguments are streamed as their raw text, which only grows until the value closes.
// The scanner only follows JSON's structure (strings, escapes, nesting); whether the object is valid
// JSON is decided once it is closed, by JSON.parse. A stream keeps the scans' states (ScanCache) and
// resumes them as its output grows, so re-reading the output costs its length once, not per delta.

/** The keys a tool call's arguments come under: "arguments" (Hermes, Mistral), "parameters" (Llama 3). */
const ARGUMENT_KEYS = new Set(["arguments", "parameters"]);

export interface ScannedCall {
  /** The function's name, once its string is closed. */
  name: string | undefined;
  /** Where the arguments value starts, once it has. */
  argsStart: number | undefined;
  /** Where it ends (exclusive), once it has. */
  argsEnd: number | undefined;
  /** After the closing brace, once it came. */
  end: number | undefined;
}

type Expect = "key" | "colon" | "value" | "in-value" | "after-value";

/** Where a scan stopped: resumed from there when the same text has grown (a stream's output only grows). */
interface ScanState {
  call: ScannedCall;
  i: number;
  depth: number;
  inString: boolean;
  escaped: boolean;
  expect: Expect;
  keyStart: number;
  key: string;
  valueStart: number;
}

/** Scan states by the object's start offset, kept by a stream for its output (which only grows). */
export type ScanCache = Map<number, ScanState>;

/**
 * Scans the object that opens at `text[start]` (which must be "{"). With `cache`, a scan of the same
 * output before it grew is resumed rather than repeated, so a stream costs the length of its output once.
 */
export function scanCallObject(text: string, start: number, cache?: ScanCache): ScannedCall {
  const cached = cache?.get(start);
  const state: ScanState = cached ?? {
    call: { name: undefined, argsStart: undefined, argsEnd: undefined, end: undefined },
    i: start,
    depth: 0,
    inString: false,
    escaped: false,
    expect: "key",
    keyStart: 0,
    key: "",
    valueStart: 0,
  };
  if (cached === undefined) cache?.set(start, state);
  scan(text, state);
  return { ...state.call };
}

function scan(text: string, s: ScanState): void {
  const call = s.call;
  if (call.end !== undefined) return;
  const endValue = (end: number) => {
    if (ARGUMENT_KEYS.has(s.key) && call.argsStart !== undefined && call.argsEnd === undefined)
      call.argsEnd = end;
    if (s.key === "name" && text[s.valueStart] === '"')
      call.name = decodeString(text.slice(s.valueStart, end));
    s.expect = "after-value";
  };
  for (; s.i < text.length; s.i++) {
    const i = s.i;
    const c = text[i] as string;
    if (s.inString) {
      if (s.escaped) s.escaped = false;
      else if (c === "\\") s.escaped = true;
      else if (c === '"') {
        s.inString = false;
        if (s.depth === 1 && s.expect === "key") {
          s.key = decodeString(text.slice(s.keyStart, i + 1)) ?? "";
          s.expect = "colon";
        } else if (s.depth === 1 && s.expect === "in-value") endValue(i + 1);
      }
      continue;
    }
    if (c === " " || c === "\n" || c === "\r" || c === "\t") continue;
    if (s.depth === 1 && s.expect === "value") {
      s.valueStart = i;
      s.expect = "in-value";
      if (ARGUMENT_KEYS.has(s.key) && call.argsStart === undefined) call.argsStart = i;
    }
    if (c === '"') {
      s.inString = true;
      if (s.depth === 1 && s.expect === "key") s.keyStart = i;
    } else if (c === "{" || c === "[") s.depth++;
    else if (c === "}" || c === "]") {
      if (s.depth === 1 && s.expect === "in-value") endValue(lastNonSpace(text, i) + 1);
      s.depth--;
      if (s.depth === 1 && s.expect === "in-value") endValue(i + 1);
      if (s.depth === 0) {
        call.end = i + 1;
        s.i = i + 1;
        return;
      }
    } else if (s.depth === 1 && c === ",") {
      if (s.expect === "in-value") endValue(lastNonSpace(text, i) + 1);
      s.expect = "key";
    } else if (s.depth === 1 && c === ":" && s.expect === "colon") s.expect = "value";
  }
}

/** The index of the last non-space character before `i`. */
function lastNonSpace(text: string, i: number): number {
  let j = i - 1;
  while (j >= 0 && /\s/.test(text[j] as string)) j--;
  return j;
}

function decodeString(literal: string): string | undefined {
  try {
    const value: unknown = JSON.parse(literal);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Skips JSON whitespace from `i`. */
export function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
}

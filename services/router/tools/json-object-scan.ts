// One JSON object of a tool call, read as far as the model has written it: the call's name once its
// string is closed, and where its arguments value starts (and ends, once it has). Tool-call parsers
// re-read the whole output on every delta, so what they stream is always a prefix of what they return
// at the end: the arguments are streamed as their raw text, which only grows until the value closes.
// The scanner only follows JSON's structure (strings, escapes, nesting); whether the object is valid
// JSON is decided once it is closed, by JSON.parse.

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

/** Scans the object that opens at `text[start]` (which must be "{"). */
export function scanCallObject(text: string, start: number): ScannedCall {
  const call: ScannedCall = { name: undefined, argsStart: undefined, argsEnd: undefined, end: undefined };
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expect: Expect = "key";
  let keyStart = 0;
  let key = "";
  let valueStart = 0;
  const endValue = (end: number) => {
    if (ARGUMENT_KEYS.has(key) && call.argsStart !== undefined && call.argsEnd === undefined)
      call.argsEnd = end;
    if (key === "name" && text[valueStart] === '"') call.name = decodeString(text.slice(valueStart, end));
    expect = "after-value";
  };
  for (let i = start; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') {
        inString = false;
        if (depth === 1 && expect === "key") {
          key = decodeString(text.slice(keyStart, i + 1)) ?? "";
          expect = "colon";
        } else if (depth === 1 && expect === "in-value") endValue(i + 1);
      }
      continue;
    }
    if (c === " " || c === "\n" || c === "\r" || c === "\t") continue;
    if (depth === 1 && expect === "value") {
      valueStart = i;
      expect = "in-value";
      if (ARGUMENT_KEYS.has(key) && call.argsStart === undefined) call.argsStart = i;
    }
    if (c === '"') {
      inString = true;
      if (depth === 1 && expect === "key") keyStart = i;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 1 && expect === "in-value") endValue(lastNonSpace(text, i) + 1);
      depth--;
      if (depth === 1 && expect === "in-value") endValue(i + 1);
      if (depth === 0) {
        call.end = i + 1;
        return call;
      }
    } else if (depth === 1 && c === ",") {
      if (expect === "in-value") endValue(lastNonSpace(text, i) + 1);
      expect = "key";
    } else if (depth === 1 && c === ":" && expect === "colon") expect = "value";
  }
  return call;
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

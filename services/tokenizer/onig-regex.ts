// Hugging Face tokenizers run their split patterns with Oniguruma. JavaScript's RegExp agrees on the
// syntax these patterns use, but not on every class: Oniguruma's \s is White_Space-like (it has U+0085
// and not U+FEFF, JavaScript's is the reverse), its \d and \w are Unicode-wide (JavaScript's are ASCII),
// and it accepts escapes that JavaScript's unicode modes reject (\' or \- outside a class). This file
// rewrites a pattern into an equivalent one for the `v` flag, which also allows classes inside classes.
import { Code, type Result, TesseraError } from "../kernel/errors.ts";

const SPACE = String.raw`\t-\r\x85\p{Z}`;
const DIGIT = String.raw`\p{Nd}`;
const WORD = String.raw`\p{L}\p{M}\p{Nd}\p{Pc}`;
const CLASS_ESCAPES: Record<string, string> = {
  s: `[${SPACE}]`,
  S: `[^${SPACE}]`,
  d: `[${DIGIT}]`,
  D: `[^${DIGIT}]`,
  w: `[${WORD}]`,
  W: `[^${WORD}]`,
};
/** Characters that may follow a backslash as themselves in a `v`-mode pattern, outside a class. */
const SYNTAX = new Set("^$\\.*+?()[]{}|/");
/** ASCII punctuation that a `v`-mode class lets (or makes) one escape. */
const CLASS_ESCAPABLE = new Set("^$\\.*+?()[]{}|/&-!#%,:;<=>@`~");

/** Compiles an Oniguruma pattern from a tokenizer.json into a global `v`-flag RegExp. */
export function compileOnigRegex(pattern: string): Result<RegExp> {
  let source: string;
  try {
    source = translate(pattern);
    return { value: new RegExp(source, "gv") };
  } catch (err) {
    return {
      error: new TesseraError(
        Code.UNIMPLEMENTED,
        `tokenizer.json: split pattern ${JSON.stringify(pattern)} is not supported: ${(err as Error).message}`,
      ),
    };
  }
}

function translate(p: string): string {
  let out = "";
  let depth = 0; // nesting of character classes
  let atomBefore = false; // inside a class: the last thing written can start a range
  let rangeOpen = false; // inside a class: a range operator waits for its end
  const atom = () => {
    atomBefore = !rangeOpen;
    rangeOpen = false;
  };
  for (let i = 0; i < p.length; i++) {
    const c = String.fromCodePoint(p.codePointAt(i)!);
    i += c.length - 1;
    if (c === "\\") {
      const e = p[++i];
      if (e === undefined) throw new Error("trailing backslash");
      const cls = CLASS_ESCAPES[e];
      if (cls !== undefined || e === "p" || e === "P") {
        // A class: no range can start from it.
        const end = p.indexOf("}", i);
        if (cls === undefined && (p[i + 1] !== "{" || end < 0)) throw new Error(`bad \\${e}`);
        out += cls ?? `\\${p.slice(i, end + 1)}`;
        if (cls === undefined) i = end;
        atomBefore = rangeOpen = false;
        continue;
      }
      if (e === "x" && p[i + 1] === "{") {
        const end = p.indexOf("}", i);
        out += `\\u${p.slice(i + 1, end + 1)}`;
        i = end;
      } else if (/[\p{L}\p{N}]/u.test(e)) out += `\\${e}`;
      else if (depth > 0) out += CLASS_ESCAPABLE.has(e) ? `\\${e}` : e;
      else out += SYNTAX.has(e) ? `\\${e}` : e;
      atom();
      continue;
    }
    if (depth === 0) {
      if (c === "[") {
        depth = 1;
        out += p[i + 1] === "^" ? "[^" : "[";
        if (p[i + 1] === "^") i++;
        atomBefore = false;
      } else out += c;
      continue;
    }
    // Inside a class.
    if (c === "[") {
      depth++;
      out += p[i + 1] === "^" ? "[^" : "[";
      if (p[i + 1] === "^") i++;
      atomBefore = rangeOpen = false;
    } else if (c === "]") {
      depth--;
      out += "]";
      atomBefore = rangeOpen = false;
    } else if (c === "&" && p[i + 1] === "&") {
      out += "&&";
      i++;
      atomBefore = rangeOpen = false;
    } else if (c === "-") {
      const range = atomBefore && p[i + 1] !== undefined && p[i + 1] !== "]";
      out += range ? "-" : "\\-";
      if (range) {
        atomBefore = false;
        rangeOpen = true;
      } else atom();
    } else {
      out += CLASS_ESCAPABLE.has(c) ? `\\${c}` : c;
      atom();
    }
  }
  if (depth !== 0) throw new Error("unterminated character class");
  return out;
}

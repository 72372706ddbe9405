// A regular expression (vLLM's guided_regex) and a list of choices (guided_choice) as EBNF grammars
// for xgrammar, whose web build compiles JSON schemas and EBNF but not regexes. The regex is matched
// against the whole output (a leading ^ and trailing $ change nothing); its syntax is the common subset
// of JavaScript's and Python's: literals, escapes (\d \w \s, ASCII only, and their negations, \n \t \r \f \v \0,
// \xHH, \uHHHH), `.` (any character but a newline), classes with ranges and negation, groups
// (capturing, non-capturing, named), alternation, and the quantifiers * + ? {n} {n,} {n,m} (lazy ones
// too: a lazy quantifier matches the same strings). Lookaround, backreferences, word boundaries and
// anchors inside the pattern cannot be expressed as a context-free grammar's prefix: refused, saying so.
type Node =
  | { type: "seq"; items: Node[] }
  | { type: "alt"; options: Node[] }
  | { type: "char"; cp: number }
  | { type: "class"; negated: boolean; ranges: [number, number][] }
  | { type: "repeat"; node: Node; min: number; max: number | undefined };

/** Longest bounded repetition, to keep grammars (and their compilation) small. */
const MAX_REPEAT = 1000;

const DIGIT: [number, number][] = [[0x30, 0x39]];
const WORD: [number, number][] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: [number, number][] = [
  [0x09, 0x0d],
  [0x20, 0x20],
];

class RegexError extends Error {}

/** The EBNF (root rule `root`) matching exactly the strings the regex matches in full. */
export function regexToEbnf(
  pattern: string,
): { value: string; error?: undefined } | { value?: undefined; error: string } {
  try {
    const parser = new Parser(pattern);
    const node = parser.parse();
    return { value: `root ::= ${print(node)}\n` };
  } catch (err) {
    if (err instanceof RegexError) return { error: err.message };
    throw err;
  }
}

/** The EBNF matching exactly one of `choices`. */
export function choicesToEbnf(choices: readonly string[]): string {
  return `root ::= ${choices.map((c) => literal([...c].map((ch) => ch.codePointAt(0)!))).join(" | ")}\n`;
}

class Parser {
  readonly #cps: number[];
  #at = 0;

  constructor(pattern: string) {
    this.#cps = [...pattern].map((ch) => ch.codePointAt(0)!);
  }

  parse(): Node {
    if (this.#peek() === 0x5e) this.#at++; // ^
    const node = this.#alternation(true);
    if (this.#at < this.#cps.length) this.#fail("unbalanced )");
    return node;
  }

  #alternation(top: boolean): Node {
    const options = [this.#sequence(top)];
    while (this.#peek() === 0x7c) {
      this.#at++;
      options.push(this.#sequence(top));
    }
    return options.length === 1 ? options[0]! : { type: "alt", options };
  }

  #sequence(top: boolean): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.#peek();
      if (c === undefined || c === 0x7c || c === 0x29) break;
      if (c === 0x24) {
        // $ ends the pattern (or a top-level alternative); anywhere else it is an anchor we cannot honour.
        this.#at++;
        const next = this.#peek();
        if (top && (next === undefined || next === 0x7c)) break;
        this.#fail("$ is supported only at the end of the pattern");
      }
      items.push(this.#quantified(this.#atom()));
    }
    return { type: "seq", items };
  }

  #atom(): Node {
    const c = this.#next()!; // #sequence saw a character here
    switch (c) {
      case 0x28: // (
        return this.#group();
      case 0x5b: // [
        return this.#class();
      case 0x2e: // .
        return { type: "class", negated: true, ranges: [[0x0a, 0x0a]] };
      case 0x5c: // \
        return this.#escape(false);
      case 0x5e:
        return this.#fail("^ is supported only at the start of the pattern");
      case 0x2a:
      case 0x2b:
      case 0x3f:
        return this.#fail(`nothing to repeat before ${String.fromCodePoint(c)}`);
      case 0x7b:
        if (this.#bounds(false) !== undefined) this.#fail("nothing to repeat before {");
        return { type: "char", cp: c };
      default:
        return { type: "char", cp: c };
    }
  }

  #group(): Node {
    if (this.#peek() === 0x3f) {
      this.#at++;
      const kind = this.#next();
      if (kind === 0x3a) {
        // (?: ...)
      } else if (kind === 0x50 && this.#peek() === 0x3c) {
        this.#at++;
        this.#skipName();
      } else if (kind === 0x3c && this.#peek() !== 0x3d && this.#peek() !== 0x21) {
        this.#skipName();
      } else {
        this.#fail("lookaround and inline flags are not supported");
      }
    }
    const node = this.#alternation(false);
    if (this.#next() !== 0x29) this.#fail("missing )");
    return node;
  }

  #skipName(): void {
    while (this.#peek() !== undefined && this.#peek() !== 0x3e) this.#at++;
    if (this.#next() !== 0x3e) this.#fail("unterminated group name");
  }

  #class(): Node {
    let negated = false;
    if (this.#peek() === 0x5e) {
      negated = true;
      this.#at++;
    }
    const ranges: [number, number][] = [];
    let first = true;
    for (;;) {
      const c = this.#next();
      if (c === undefined) this.#fail("missing ]");
      if (c === 0x5d && !first) break;
      first = false;
      let lo: number;
      if (c === 0x5c) {
        const e = this.#escape(true);
        if (e.type === "class") {
          if (e.negated) this.#fail("\\D, \\W and \\S are not supported inside [...]");
          ranges.push(...e.ranges);
          continue;
        }
        lo = (e as { cp: number }).cp;
      } else {
        lo = c;
      }
      if (
        this.#peek() === 0x2d &&
        this.#cps[this.#at + 1] !== 0x5d &&
        this.#cps[this.#at + 1] !== undefined
      ) {
        this.#at++;
        let hi = this.#next()!;
        if (hi === 0x5c) {
          const e = this.#escape(true);
          if (e.type !== "char") this.#fail("a class escape cannot end a range");
          hi = e.cp;
        }
        if (hi < lo) this.#fail("range out of order in [...]");
        ranges.push([lo, hi]);
      } else {
        ranges.push([lo, lo]);
      }
    }
    return { type: "class", negated, ranges };
  }

  #escape(inClass: boolean): Node & ({ type: "char" } | { type: "class" }) {
    const c = this.#next();
    if (c === undefined) return this.#fail("the pattern ends with \\");
    const ch = String.fromCodePoint(c);
    switch (ch) {
      case "d":
      case "D":
        return { type: "class", negated: ch === "D", ranges: DIGIT };
      case "w":
      case "W":
        return { type: "class", negated: ch === "W", ranges: WORD };
      case "s":
      case "S":
        return { type: "class", negated: ch === "S", ranges: SPACE };
      case "n":
        return { type: "char", cp: 0x0a };
      case "t":
        return { type: "char", cp: 0x09 };
      case "r":
        return { type: "char", cp: 0x0d };
      case "f":
        return { type: "char", cp: 0x0c };
      case "v":
        return { type: "char", cp: 0x0b };
      case "0":
        return { type: "char", cp: 0 };
      case "x":
        return { type: "char", cp: this.#hex(2) };
      case "u":
        return { type: "char", cp: this.#hex(4) };
      case "b":
        if (inClass) return { type: "char", cp: 0x08 };
        return this.#fail("word boundaries (\\b) are not supported");
      case "B":
      case "A":
      case "Z":
      case "z":
        return this.#fail(`anchors (\\${ch}) are not supported`);
      default:
        if (/[1-9k]/.test(ch)) return this.#fail("backreferences are not supported");
        if (/[A-Za-z]/.test(ch)) return this.#fail(`unknown escape \\${ch}`);
        return { type: "char", cp: c };
    }
  }

  #hex(digits: number): number {
    const text = String.fromCodePoint(...this.#cps.slice(this.#at, this.#at + digits));
    if (!new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(text)) this.#fail(`expected ${digits} hex digits`);
    this.#at += digits;
    return Number.parseInt(text, 16);
  }

  #quantified(node: Node): Node {
    let out = node;
    for (;;) {
      const c = this.#peek();
      let min: number;
      let max: number | undefined;
      if (c === 0x2a) [min, max] = [0, undefined];
      else if (c === 0x2b) [min, max] = [1, undefined];
      else if (c === 0x3f) [min, max] = [0, 1];
      else if (c === 0x7b) {
        const bounds = this.#bounds(true);
        if (bounds === undefined) return out;
        [min, max] = bounds;
        this.#at--; // #bounds consumed the closing brace; the common step below does it again
      } else return out;
      this.#at++;
      if (this.#peek() === 0x3f)
        this.#at++; // lazy: the same strings
      else if (this.#peek() === 0x2b) this.#fail("possessive quantifiers are not supported");
      if (out.type === "repeat") this.#fail("nested quantifier");
      out = { type: "repeat", node: out, min, max };
    }
  }

  /** A {n}, {n,} or {n,m} at the cursor, consumed when `consume` (else only looked at); undefined if none. */
  #bounds(consume: boolean): [number, number | undefined] | undefined {
    const rest = String.fromCodePoint(...this.#cps.slice(this.#at, this.#at + 24));
    const m = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? undefined : Number(m[3]);
    if (consume) {
      if (max !== undefined && max < min) this.#fail("{n,m} with m < n");
      if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) this.#fail(`repetition counts above ${MAX_REPEAT}`);
      this.#at += m[0].length;
    }
    return [min, max];
  }

  #peek(): number | undefined {
    return this.#cps[this.#at];
  }

  #next(): number | undefined {
    return this.#cps[this.#at++];
  }

  #fail(message: string): never {
    throw new RegexError(`${message} (at character ${this.#at})`);
  }
}

function print(node: Node): string {
  switch (node.type) {
    case "seq": {
      if (node.items.length === 0) return '""';
      // Runs of characters become one string literal.
      const parts: string[] = [];
      let run: number[] = [];
      for (const item of node.items) {
        if (item.type === "char") {
          run.push(item.cp);
          continue;
        }
        if (run.length > 0) parts.push(literal(run));
        run = [];
        parts.push(print(item));
      }
      if (run.length > 0) parts.push(literal(run));
      return parts.length === 1 ? parts[0]! : `(${parts.join(" ")})`;
    }
    case "alt":
      return `(${node.options.map(print).join(" | ")})`;
    case "char":
      return literal([node.cp]);
    case "class":
      return `[${node.negated ? "^" : ""}${node.ranges.map(([lo, hi]) => (lo === hi ? ebnfChar(lo) : `${ebnfChar(lo)}-${ebnfChar(hi)}`)).join("")}]`;
    case "repeat": {
      const inner = print(node.node);
      const operand = /^(\(.*\)|\[.*\]|"(?:[^"\\]|\\.)*")$/s.test(inner) ? inner : `(${inner})`;
      if (node.min === 0 && node.max === undefined) return `${operand}*`;
      if (node.min === 1 && node.max === undefined) return `${operand}+`;
      if (node.min === 0 && node.max === 1) return `${operand}?`;
      if (node.max === undefined) return `${operand}{${node.min},}`;
      return `${operand}{${node.min},${node.max}}`;
    }
    default:
      return assertNever(node);
  }
}

function literal(cps: readonly number[]): string {
  return `"${cps.map(ebnfChar).join("")}"`;
}

/** A code point inside an EBNF string or class: letters, digits and spaces as they are, the rest escaped. */
function ebnfChar(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x20)
    return String.fromCodePoint(cp);
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, "0")}`;
  return `\\U${cp.toString(16).padStart(8, "0")}`;
}

function assertNever(value: never): never {
  throw new Error(`unexpected regex node ${JSON.stringify(value)}`);
}

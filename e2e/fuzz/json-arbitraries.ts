// Random JSON values of the kinds that break request parsers: strings with lone surrogates, NUL,
// right-to-left overrides, byte order marks and template syntax; numbers at the edges (-0, 1e308,
// 5e-324, 2^53 + 1, 2^64, literals JSON.parse reads as Infinity); "NaN"-like strings; deep nesting;
// very long strings and arrays. A value may hold RawJson, text written into the body as it is
// (JSON.stringify cannot write 1e400 or a value nested 100,000 deep), so bodies are written with
// toJsonText.
import fc from "fast-check";

/** JSON text put into a body verbatim. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const oddChar = fc.constantFrom(
  "\0",
  "\u202e", // right-to-left override
  "\u200f", // right-to-left mark
  "\u0627", // Arabic alef
  "\ufeff", // byte order mark
  "\u0301", // combining acute accent
  "\uffff",
  "😀",
  "\n",
  '"',
  "\\",
  "<s>",
  "</s>",
  "<|im_end|>",
  "{{",
  "{%",
  "%}",
);

/** Strings of any code unit, weighted towards the awkward ones. */
export const nastyString = fc.oneof(
  fc.string({ unit: fc.oneof(loneSurrogate, oddChar, fc.string({ unit: "binary", maxLength: 1 })) }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("", " ", "NaN", "Infinity", "-Infinity", "-0", "1e308", "0x10", "null", "true", "[]", "{}"),
  fc.integer({ min: 1, max: 200_000 }).map((n) => "é".repeat(n)),
);

/** Numbers at the edges, as JSON text where JSON.stringify cannot write them. */
export const nastyNumber = fc.oneof(
  fc.constantFrom(0, -0, 1, -1, 0.5, 1.5, 2, 2.0000001, 16, 20, 21, 256, 4096, 2 ** 31, 2 ** 32, 2 ** 53),
  fc.constantFrom(2 ** 53 + 2, 2 ** 64, 1e21, 1e308, -1e308, 5e-324, -5e-324, Number.MAX_VALUE),
  fc
    .constantFrom("1e400", "-1e400", "-0.0", "1E-400", "123456789012345678901234567890")
    .map((t) => new RawJson(t)),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.integer({ min: -3, max: 40 }),
);

/** A value nested `depth` deep in arrays or objects, written as text. */
export const deeplyNested = fc
  .tuple(fc.integer({ min: 100, max: 100_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? new RawJson(`${"[".repeat(depth)}1${"]".repeat(depth)}`)
      : new RawJson(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
  );

/** Long arrays of one value, built directly (fc.array of 100,000 elements is slow to generate). */
export const longArray = fc
  .tuple(fc.integer({ min: 1_000, max: 100_000 }), fc.constantFrom(1, "a", null, 0.5, [], {}))
  .map(([n, v]) => new RawJson(`[${Array(n).fill(JSON.stringify(v)).join(",")}]`));

/** Any JSON value, awkward ones likely. */
export const anyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(null, true, false),
    nastyNumber,
    nastyString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(nastyString, tie("value"), { maxKeys: 4 }),
    deeplyNested,
    longArray,
  ),
})).value;

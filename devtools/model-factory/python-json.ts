// JSON text as Hugging Face's Python side writes it (`json.dumps(obj, indent=2, sort_keys=True)`): floats in
// Python's repr (10000.0, 1e-06), integers beyond 2^53 exact (bigint), non-ASCII left as is. With unmarked
// numbers and no float markers it is exactly JSON.stringify(value, null, 2) (Maps aside), which is also how the Rust
// `tokenizers` library pretty-prints tokenizer.json.

/** Marks a number to be written as a Python float (`1.0`, not `1`). */
export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

export const pyFloat = (value: number): PyFloat => new PyFloat(value);

/** Objects are plain objects or, where key order matters (integer-like keys come first in a JS object), Maps. */
export type PyJson =
  | null
  | boolean
  | number
  | bigint
  | string
  | PyFloat
  | readonly PyJson[]
  | PyJsonObject
  | ReadonlyMap<string, PyJson>;
export interface PyJsonObject {
  readonly [key: string]: PyJson | undefined;
}

/** Python's `repr(float)`: shortest round-trip digits, scientific below 1e-4 and from 1e16 on. */
export function formatPythonFloat(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa = "", expText = "0"] = x.toExponential().split("e");
  const exp = Number(expText);
  const sign = mantissa.startsWith("-") ? "-" : "";
  const digits = mantissa.replace("-", "").replace(".", "");
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${intPart}.${frac === "" ? "0" : frac}`;
}

/** Pretty JSON with a 2-space indent; keys sorted (code-unit order, as Python sorts str) when asked. */
export function toPythonJson(value: PyJson, options: { sortKeys?: boolean } = {}): string {
  const sortKeys = options.sortKeys ?? false;
  const write = (v: PyJson, indent: string): string => {
    if (v === null) return "null";
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "string") return JSON.stringify(v);
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : formatPythonFloat(v);
    if (v instanceof PyFloat) return formatPythonFloat(v.value);
    const inner = `${indent}  `;
    if (isArray(v)) {
      if (v.length === 0) return "[]";
      return `[\n${v.map((x) => inner + write(x, inner)).join(",\n")}\n${indent}]`;
    }
    const entries: [string, PyJson][] =
      v instanceof Map
        ? [...(v as ReadonlyMap<string, PyJson>)]
        : Object.entries(v as PyJsonObject).filter((e): e is [string, PyJson] => e[1] !== undefined);
    if (sortKeys) entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    if (entries.length === 0) return "{}";
    return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${write(x, inner)}`).join(",\n")}\n${indent}}`;
  };
  return write(value, "");
}

function isArray(v: PyJson): v is readonly PyJson[] {
  return Array.isArray(v);
}

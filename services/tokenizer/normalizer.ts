// tokenizer.json "normalizer": the Unicode forms, lowercasing, Prepend, Replace and Strip, alone or in a
// Sequence, as Hugging Face tokenizers 0.23 applies them to each part of the input between added tokens.
// Others (Precompiled, BertNormalizer, NFKC-with-charsmap...) belong to tokenizers this package does not
// load and are refused with UNIMPLEMENTED.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";
import { compileOnigRegex } from "./onig-regex.ts";

export type Normalizer = (text: string) => string;

const FORMS: Record<string, Normalizer> = {
  NFC: (s) => s.normalize("NFC"),
  NFD: (s) => s.normalize("NFD"),
  NFKC: (s) => s.normalize("NFKC"),
  NFKD: (s) => s.normalize("NFKD"),
  // Character by character, as Hugging Face does: no final-sigma rule.
  Lowercase: (s) => (s.includes("Σ") ? Array.from(s, (c) => c.toLowerCase()).join("") : s.toLowerCase()),
};

/** Rust's char::is_whitespace. */
const SPACE_START = /^[\t-\r \x85\p{Z}]+/v;
const SPACE_END = /[\t-\r \x85\p{Z}]+$/v;

/** Parses a "normalizer" value; null gives undefined (no normalization). */
export function parseNormalizer(json: unknown, field = "normalizer"): Result<Normalizer | undefined> {
  if (json === null || json === undefined) return { value: undefined };
  if (!isObject(json)) return invalid(field, "must be an object or null");
  const type = typeOf(json);
  if (type === undefined) return invalid(`${field}.type`, "must be a string");
  const form = FORMS[type];
  if (form !== undefined) return { value: form };
  switch (type) {
    case "Prepend": {
      const prepend = json["prepend"];
      if (typeof prepend !== "string") return invalid(`${field}.prepend`, "must be a string");
      return { value: (s) => (s === "" ? s : prepend + s) };
    }
    case "Replace": {
      const pattern = json["pattern"];
      const content = json["content"];
      if (typeof content !== "string") return invalid(`${field}.content`, "must be a string");
      if (isObject(pattern) && typeof pattern["String"] === "string" && pattern["String"] !== "") {
        const from = pattern["String"];
        return { value: (s) => s.replaceAll(from, content) };
      }
      if (isObject(pattern) && typeof pattern["Regex"] === "string") {
        const re = compileOnigRegex(pattern["Regex"]);
        if (re.error) return re;
        // A literal replacement, as in Rust (no $1 expansion).
        return { value: (s) => s.replace(re.value, () => content) };
      }
      return invalid(`${field}.pattern`, 'must be {"String": non-empty string} or {"Regex": string}');
    }
    case "Strip": {
      const left = json["strip_left"] === true;
      const right = json["strip_right"] === true;
      return {
        value: (s) => {
          let out = left ? s.replace(SPACE_START, "") : s;
          if (right) out = out.replace(SPACE_END, "");
          return out;
        },
      };
    }
    case "Sequence": {
      const list = json["normalizers"];
      if (!Array.isArray(list)) return invalid(`${field}.normalizers`, "must be an array");
      const steps: Normalizer[] = [];
      for (const [i, item] of list.entries()) {
        const step = parseNormalizer(item, `${field}.normalizers[${i}]`);
        if (step.error) return step;
        if (step.value) steps.push(step.value);
      }
      return { value: (s) => steps.reduce((acc, step) => step(acc), s) };
    }
    default:
      return unsupported(`${field}.type`, `${type} is not supported`);
  }
}

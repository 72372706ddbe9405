// tokenizer.json "normalizer": the Unicode forms and lowercasing, alone or in a Sequence. Others
// (Replace, Prepend, Precompiled, BertNormalizer...) belong to tokenizers this package does not load.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";

export type Normalizer = (text: string) => string;

const FORMS: Record<string, Normalizer> = {
  NFC: (s) => s.normalize("NFC"),
  NFD: (s) => s.normalize("NFD"),
  NFKC: (s) => s.normalize("NFKC"),
  NFKD: (s) => s.normalize("NFKD"),
  // Character by character, as Hugging Face does: no final-sigma rule.
  Lowercase: (s) => (s.includes("Σ") ? Array.from(s, (c) => c.toLowerCase()).join("") : s.toLowerCase()),
};

/** Parses a "normalizer" value; null gives undefined (no normalization). */
export function parseNormalizer(json: unknown, field = "normalizer"): Result<Normalizer | undefined> {
  if (json === null || json === undefined) return { value: undefined };
  if (!isObject(json)) return invalid(field, "must be an object or null");
  const type = typeOf(json);
  if (type === undefined) return invalid(`${field}.type`, "must be a string");
  const form = FORMS[type];
  if (form !== undefined) return { value: form };
  if (type !== "Sequence") return unsupported(`${field}.type`, `${type} is not supported`);
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

// tokenizer.json "post_processor", as far as ids go: which special tokens `encode` puts before and after
// the text when asked to add special tokens (TemplateProcessing's "single" template, Roberta/Bert's
// cls … sep). ByteLevel only trims offsets, which this tokenizer does not report.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";

export interface SpecialTemplate {
  readonly prefix: readonly number[];
  readonly suffix: readonly number[];
}

export const NO_SPECIAL_TOKENS: SpecialTemplate = { prefix: [], suffix: [] };

export function parsePostProcessor(json: unknown, field = "post_processor"): Result<SpecialTemplate> {
  if (json === null || json === undefined) return { value: NO_SPECIAL_TOKENS };
  if (!isObject(json)) return invalid(field, "must be an object or null");
  switch (typeOf(json)) {
    case "ByteLevel":
      return { value: NO_SPECIAL_TOKENS };
    case "TemplateProcessing":
      return parseTemplate(json, field);
    case "RobertaProcessing":
    case "BertProcessing": {
      const cls = json["cls"];
      const sep = json["sep"];
      if (!Array.isArray(cls) || !Number.isSafeInteger(cls[1]))
        return invalid(`${field}.cls`, "must be [token, id]");
      if (!Array.isArray(sep) || !Number.isSafeInteger(sep[1]))
        return invalid(`${field}.sep`, "must be [token, id]");
      return { value: { prefix: [cls[1] as number], suffix: [sep[1] as number] } };
    }
    case "Sequence": {
      const list = json["processors"];
      if (!Array.isArray(list)) return invalid(`${field}.processors`, "must be an array");
      // Each processor wraps what the ones before it made.
      let prefix: number[] = [];
      let suffix: number[] = [];
      for (const [i, item] of list.entries()) {
        const t = parsePostProcessor(item, `${field}.processors[${i}]`);
        if (t.error) return t;
        prefix = [...t.value.prefix, ...prefix];
        suffix = [...suffix, ...t.value.suffix];
      }
      return { value: { prefix, suffix } };
    }
    default:
      return unsupported(`${field}.type`, `${String(typeOf(json))} is not supported`);
  }
}

function parseTemplate(json: Record<string, unknown>, field: string): Result<SpecialTemplate> {
  const single = json["single"];
  const specials = isObject(json["special_tokens"]) ? json["special_tokens"] : {};
  if (!Array.isArray(single)) return invalid(`${field}.single`, "must be an array");
  const prefix: number[] = [];
  const suffix: number[] = [];
  let seenSequence = false;
  for (const [i, piece] of single.entries()) {
    const at = `${field}.single[${i}]`;
    if (isObject(piece) && isObject(piece["Sequence"])) {
      if (piece["Sequence"]["id"] !== "A" || seenSequence)
        return invalid(at, "the single template takes sequence A once");
      seenSequence = true;
      continue;
    }
    const name = isObject(piece) && isObject(piece["SpecialToken"]) ? piece["SpecialToken"]["id"] : undefined;
    if (typeof name !== "string") return invalid(at, "must be a Sequence or a SpecialToken");
    const special = specials[name];
    const ids = isObject(special) ? special["ids"] : undefined;
    if (!Array.isArray(ids) || !ids.every((id) => Number.isSafeInteger(id))) {
      return invalid(`${field}.special_tokens`, `${JSON.stringify(name)} must have ids`);
    }
    (seenSequence ? suffix : prefix).push(...(ids as number[]));
  }
  if (!seenSequence) return invalid(`${field}.single`, "must hold sequence A");
  return { value: { prefix, suffix } };
}

// tokenizer_config.json, the parts a tokenizer needs: the names of bos/eos/pad, and add_bos_token /
// add_eos_token, which (as in transformers' Llama tokenizers) decide the special tokens of `encode`
// when present.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject } from "./json-fields.ts";

export interface TokenizerConfig {
  bosToken?: string;
  eosToken?: string;
  padToken?: string;
  addBosToken?: boolean;
  addEosToken?: boolean;
}

export function parseTokenizerConfig(json: unknown): Result<TokenizerConfig> {
  if (json === undefined || json === null) return { value: {} };
  if (!isObject(json)) return invalid("tokenizer_config", "must be an object");
  const config: TokenizerConfig = {};
  for (const [key, name] of [
    ["bos_token", "bosToken"],
    ["eos_token", "eosToken"],
    ["pad_token", "padToken"],
  ] as const) {
    // A plain string, or an AddedToken object as older configs write it.
    const v = json[key];
    const content = isObject(v) ? v["content"] : v;
    if (typeof content === "string") config[name] = content;
    else if (content !== undefined && content !== null)
      return invalid(`tokenizer_config.${key}`, "must be a string");
  }
  for (const [key, name] of [
    ["add_bos_token", "addBosToken"],
    ["add_eos_token", "addEosToken"],
  ] as const) {
    const v = json[key];
    if (typeof v === "boolean") config[name] = v;
    else if (v !== undefined && v !== null) return invalid(`tokenizer_config.${key}`, "must be a boolean");
  }
  return { value: config };
}

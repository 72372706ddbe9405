// tokenizer_config.json, the parts a tokenizer needs: the names of bos/eos/pad, add_bos_token /
// add_eos_token, which (as in transformers) decide the special tokens of `encode` when present, and
// every special token it names (bos, eos, unk, pad, additional_special_tokens), which transformers makes
// special added tokens when tokenizer.json does not already have them as added tokens.
import type { Result } from "../kernel/errors.ts";
import { invalid, isObject } from "./json-fields.ts";

export interface TokenizerConfig {
  bosToken?: string;
  eosToken?: string;
  padToken?: string;
  addBosToken?: boolean;
  addEosToken?: boolean;
  /** The contents of bos_token, eos_token, unk_token, pad_token and additional_special_tokens. */
  namedSpecialTokens: string[];
}

export function parseTokenizerConfig(json: unknown): Result<TokenizerConfig> {
  if (json === undefined || json === null) return { value: { namedSpecialTokens: [] } };
  if (!isObject(json)) return invalid("tokenizer_config", "must be an object");
  const config: TokenizerConfig = { namedSpecialTokens: [] };
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
  const named = [json["bos_token"], json["eos_token"], json["unk_token"], json["pad_token"]];
  const extra = json["additional_special_tokens"];
  if (Array.isArray(extra)) named.push(...extra);
  for (const v of named) {
    const content = isObject(v) ? v["content"] : v;
    if (typeof content === "string" && content !== "") config.namedSpecialTokens.push(content);
  }
  return { value: config };
}

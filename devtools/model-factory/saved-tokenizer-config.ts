// tokenizer_config.json as transformers 5.18's `save_pretrained` writes it after loading a tokenizer folder:
// the init arguments read from the source config, less what 5.18 no longer saves there (the added-tokens
// table lives in tokenizer.json, add_bos/eos_token in its post-processor, the chat template in
// chat_template.jinja), special tokens as plain strings, additional_special_tokens renamed
// extra_special_tokens, and the keys from_pretrained adds (backend, is_local, local_files_only). Written
// with sorted keys, a 2-space indent and a final newline.
import type { PyJson, PyJsonObject } from "./python-json.ts";
import type { TokenizerRebuild } from "./saved-tokenizer-json.ts";

/** Keys 5.18 drops when it saves (see PreTrainedTokenizerBase.save_pretrained). */
const DROPPED = [
  "added_tokens_decoder",
  "add_bos_token",
  "add_eos_token",
  "chat_template",
  "additional_special_tokens",
  "name_or_path",
  "special_tokens_map_file",
  "tokenizer_file",
  "device_map",
  "slow_tokenizer_class",
  "files_loaded",
];

/** Constructor arguments LlamaTokenizer consumes without passing them on (so they are not saved). */
const LLAMA_CONSUMED = ["legacy", "vocab", "merges"];

const SAVED_CLASS: Readonly<Record<TokenizerRebuild, string | undefined>> = {
  llama: "LlamaTokenizer",
  qwen2: "Qwen2Tokenizer",
  "as-is": "TokenizersBackend",
};

/** A special token given as an AddedToken object ({"content": ...}) is saved as its string. */
function tokenString(value: unknown): unknown {
  if (typeof value === "object" && value !== null && "content" in value) return value.content;
  return value;
}

/** Integers beyond 2^53 (model_max_length's int(1e30)) are written exactly, as Python does. */
function exactIntegers(value: unknown): unknown {
  if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value))
    return BigInt(value);
  if (Array.isArray(value)) return value.map(exactIntegers);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exactIntegers(v)]));
  return value;
}

export function savedTokenizerConfig(
  source: Record<string, unknown>,
  rebuild: TokenizerRebuild,
): PyJsonObject {
  const config: Record<string, unknown> = { ...source };
  for (const key of DROPPED) delete config[key];
  if (rebuild === "llama") for (const key of LLAMA_CONSUMED) delete config[key];
  if (rebuild !== "as-is") config["add_prefix_space"] = source["add_prefix_space"] ?? null;
  for (const key of [
    "bos_token",
    "eos_token",
    "unk_token",
    "pad_token",
    "sep_token",
    "cls_token",
    "mask_token",
  ])
    if (key in config) config[key] = tokenString(config[key]);
  const extra = source["additional_special_tokens"];
  if (Array.isArray(extra)) config["extra_special_tokens"] = extra.map(tokenString);
  config["backend"] = "tokenizers";
  config["is_local"] = true;
  config["local_files_only"] = false;
  config["tokenizer_class"] = SAVED_CLASS[rebuild];
  return exactIntegers(config) as Record<string, PyJson>;
}

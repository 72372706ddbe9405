// tokenizer.json as transformers 5.18's `save_pretrained` writes it for a tokenizer folder a user brings.
// transformers 5 does not keep a known tokenizer class's pipeline from the file: LlamaTokenizer and
// Qwen2Tokenizer rebuild it from the vocab and merges in their constructors (normalizer, pre-tokenizer,
// decoder, BPE options); other classes keep the file's pipeline. What each class rebuilds is the
// tokenizer's knowledge (services/tokenizer/transformers-class.ts, which also runs it); this file writes
// it: the classes it can save, the Rust `tokenizers` library's field order, the vocab by id and each merge
// as a pair. Checked byte for byte against 5.18 for the Llama 2, Llama 3 and Qwen 3 tokenizers
// (devtools/reference/checkpoints.py).
import { TesseraError } from "../../services/kernel/errors.ts";
import { isObject } from "../../services/tokenizer/json-fields.ts";
import { transformersPipeline } from "../../services/tokenizer/transformers-class.ts";
import type { PyJson, PyJsonObject } from "./python-json.ts";

type Json = unknown;
type JsonObject = Record<string, Json>;

/**
 * Which transformers 5.18 class a tokenizer_class is, as the saved files need it (the `Fast` names are
 * aliases); what each class rebuilds is transformersPipeline's.
 */
export type TokenizerRebuild = "llama" | "qwen2" | "as-is";

const REBUILDS: Readonly<Record<string, TokenizerRebuild>> = {
  LlamaTokenizer: "llama",
  LlamaTokenizerFast: "llama",
  Qwen2Tokenizer: "qwen2",
  Qwen2TokenizerFast: "qwen2",
  PreTrainedTokenizerFast: "as-is",
  TokenizersBackend: "as-is",
};

export const SUPPORTED_TOKENIZER_CLASSES: readonly string[] = Object.keys(REBUILDS);

export function tokenizerRebuild(tokenizerClass: unknown): TokenizerRebuild {
  const rebuild = typeof tokenizerClass === "string" ? REBUILDS[tokenizerClass] : undefined;
  if (rebuild === undefined) {
    throw TesseraError.invalidArgument(
      "tokenizer",
      `tokenizer_config.json tokenizer_class ${JSON.stringify(tokenizerClass)} is not one this tool can save as ` +
        `transformers 5.18 does; supported: ${SUPPORTED_TOKENIZER_CLASSES.join(", ")}`,
    );
  }
  return rebuild;
}

/** The file's BPE model as written, or with a rebuilding constructor's arguments instead of its fields. */
function bpeModel(model: Json, rebuilt: JsonObject | undefined): Map<string, PyJson> {
  if (!isObject(model) || model["type"] !== "BPE") {
    const type = isObject(model) ? model["type"] : undefined;
    throw TesseraError.invalidArgument(
      "tokenizer",
      `tokenizer.json model type ${JSON.stringify(type)} is not supported (BPE only)`,
    );
  }
  const m = rebuilt === undefined ? model : { ...rebuilt, vocab: model["vocab"], merges: model["merges"] };
  const vocab = m["vocab"];
  const merges = m["merges"];
  if (!isObject(vocab) || !Array.isArray(merges))
    throw TesseraError.invalidArgument(
      "tokenizer",
      "tokenizer.json model has no vocab object or merges list",
    );
  // Rust writes the vocab in id order; integer-like tokens would come first in a JS object, so a Map.
  const byId = Object.entries(vocab).sort((a, b) => (a[1] as number) - (b[1] as number));
  const pairs = merges.map((merge: Json) => (typeof merge === "string" ? splitMerge(merge) : merge));
  const field = (name: string, fallback: Json) => (m[name] === undefined ? fallback : m[name]) as PyJson;
  return new Map<string, PyJson>([
    ["type", "BPE"],
    ["dropout", field("dropout", null)],
    ["unk_token", field("unk_token", null)],
    ["continuing_subword_prefix", field("continuing_subword_prefix", null)],
    ["end_of_word_suffix", field("end_of_word_suffix", null)],
    ["fuse_unk", field("fuse_unk", false)],
    ["byte_fallback", field("byte_fallback", false)],
    ["ignore_merges", field("ignore_merges", false)],
    ["vocab", new Map(byId as [string, PyJson][])],
    ["merges", pairs as PyJson],
  ]);
}

/** "a b" -> ["a", "b"] (the old merges format; a token never holds a space, so the first splits). */
function splitMerge(merge: string): string[] {
  const space = merge.indexOf(" ");
  return [merge.slice(0, space), merge.slice(space + 1)];
}

/**
 * The tokenizer.json object transformers 5.18 writes for `source` (a parsed tokenizer.json) and `config`
 * (its tokenizer_config.json), whose tokenizer_class must be one of SUPPORTED_TOKENIZER_CLASSES.
 */
export function savedTokenizerJson(source: Json, config: JsonObject): PyJsonObject {
  tokenizerRebuild(config["tokenizer_class"]);
  if (!isObject(source))
    throw TesseraError.invalidArgument("tokenizer", "tokenizer.json is not a JSON object");
  const rebuilt = transformersPipeline(config);
  const part = (name: "normalizer" | "pre_tokenizer" | "decoder") =>
    (rebuilt === undefined ? (source[name] ?? null) : rebuilt[name]) as PyJson;
  return {
    version: (source["version"] ?? "1.0") as PyJson,
    truncation: (source["truncation"] ?? null) as PyJson,
    padding: (source["padding"] ?? null) as PyJson,
    // The file's, even for a rebuilding class, which also reads config's added_tokens_decoder: for the
    // checked tokenizers the same tokens, and the file's are in the order Rust writes their fields.
    added_tokens: (source["added_tokens"] ?? []) as PyJson,
    normalizer: part("normalizer"),
    pre_tokenizer: part("pre_tokenizer"),
    post_processor: (source["post_processor"] ?? null) as PyJson,
    decoder: part("decoder"),
    model: bpeModel(source["model"], rebuilt?.model),
  };
}

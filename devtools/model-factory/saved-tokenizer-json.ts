// tokenizer.json as transformers 5.18's `save_pretrained` writes it for a tokenizer folder a user brings.
// transformers 5 does not keep a known tokenizer class's pipeline from the file: LlamaTokenizer and
// Qwen2Tokenizer rebuild it from the vocab and merges in their constructors (normalizer, pre-tokenizer,
// decoder, BPE options); other classes keep the file's pipeline. The Rust `tokenizers` library then writes
// its fields in a fixed order, the vocab by id and each merge as a pair. Checked byte for byte against
// 5.18 for the Llama 2, Llama 3 and Qwen 3 tokenizers (devtools/reference/checkpoints.py).
import { TesseraError } from "../../services/kernel/errors.ts";
import type { PyJson, PyJsonObject } from "./python-json.ts";

type Json = unknown;
type JsonObject = Record<string, Json>;

/** How transformers 5.18 builds a tokenizer_class's pipeline (the `Fast` names are aliases). */
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

/** transformers' Qwen2Tokenizer PRETOKENIZE_REGEX. */
const QWEN2_PRETOKENIZE_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** What the rebuilding constructors read from tokenizer_config.json. */
export interface RebuildOptions {
  /** `add_prefix_space` (null when absent). */
  readonly addPrefixSpace: boolean | null;
  /** `legacy` (LlamaTokenizer; its constructor's default is false). */
  readonly legacy: boolean;
}

interface Pipeline {
  normalizer: Json;
  pre_tokenizer: Json;
  decoder: Json;
  /** BPE fields the constructor sets. */
  model: JsonObject;
}

function llamaPipeline(options: RebuildOptions): Pipeline {
  const addPrefixSpace = options.addPrefixSpace ?? true;
  const prependScheme = !addPrefixSpace ? "never" : options.legacy ? "always" : "first";
  const decoders: JsonObject[] = [
    { type: "Replace", pattern: { String: "▁" }, content: " " },
    { type: "ByteFallback" },
    { type: "Fuse" },
  ];
  if (addPrefixSpace) decoders.push({ type: "Strip", content: " ", start: 1, stop: 0 });
  return {
    normalizer: null,
    pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: prependScheme, split: false },
    decoder: { type: "Sequence", decoders },
    model: { unk_token: null, fuse_unk: true, byte_fallback: true },
  };
}

function qwen2Pipeline(options: RebuildOptions): Pipeline {
  return {
    normalizer: { type: "NFC" },
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: QWEN2_PRETOKENIZE_REGEX }, behavior: "Isolated", invert: false },
        {
          type: "ByteLevel",
          add_prefix_space: options.addPrefixSpace ?? false,
          trim_offsets: true,
          use_regex: false,
        },
      ],
    },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
    },
  };
}

const isObject = (v: Json): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

function bpeModel(model: Json, overrides: JsonObject): Map<string, PyJson> {
  if (!isObject(model) || model["type"] !== "BPE") {
    const type = isObject(model) ? model["type"] : undefined;
    throw TesseraError.invalidArgument(
      "tokenizer",
      `tokenizer.json model type ${JSON.stringify(type)} is not supported (BPE only)`,
    );
  }
  const m = { ...model, ...overrides };
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

/** The tokenizer.json object transformers 5.18 writes for `source` (a parsed tokenizer.json). */
export function savedTokenizerJson(
  source: Json,
  rebuild: TokenizerRebuild,
  options: RebuildOptions,
): PyJsonObject {
  if (!isObject(source))
    throw TesseraError.invalidArgument("tokenizer", "tokenizer.json is not a JSON object");
  const pipeline: Pipeline =
    rebuild === "llama"
      ? llamaPipeline(options)
      : rebuild === "qwen2"
        ? qwen2Pipeline(options)
        : {
            normalizer: source["normalizer"] ?? null,
            pre_tokenizer: source["pre_tokenizer"] ?? null,
            decoder: source["decoder"] ?? null,
            model: {},
          };
  return {
    version: (source["version"] ?? "1.0") as PyJson,
    truncation: (source["truncation"] ?? null) as PyJson,
    padding: (source["padding"] ?? null) as PyJson,
    added_tokens: (source["added_tokens"] ?? []) as PyJson,
    normalizer: pipeline.normalizer as PyJson,
    pre_tokenizer: pipeline.pre_tokenizer as PyJson,
    post_processor: (source["post_processor"] ?? null) as PyJson,
    decoder: pipeline.decoder as PyJson,
    model: bpeModel(source["model"], pipeline.model),
  };
}

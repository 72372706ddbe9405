// What transformers 5 (5.18) makes of a checkpoint's tokenizer.json, by the tokenizer_class that its
// tokenizer_config.json names. A class with its own __init__ rebuilds the pipeline around the file's
// vocabulary and merges, so a user's tokenizer.json is not what runs:
// - LlamaTokenizer (Llama 2, TinyLlama, Mistral 7B v0.1-v0.3, Mixtral): no normalizer, a Metaspace
//   pre-tokenizer (no split) whose prepend_scheme is "first", or "always" with `legacy: true`, or
//   "never" with `add_prefix_space: false`; BPE with byte_fallback and fuse_unk, no unk token; the
//   decoder Replace("▁", " "), ByteFallback, Fuse, then Strip one leading space unless add_prefix_space
//   is false. (The file's own Prepend("▁") normalizer would give " Hello" two "▁"; transformers gives one.)
// - GemmaTokenizer: Replace(" " → "▁") normalizer, Split(" ", MergedWithPrevious), BPE with
//   byte_fallback, fuse_unk and unk "<unk>", decoder Replace, ByteFallback, Fuse.
// - Qwen2Tokenizer (Qwen 2, 2.5, 3): NFC, Split(its pattern) + ByteLevel(add_prefix_space: false),
//   byte-level BPE, ByteLevel decoder.
// Any other class (PreTrainedTokenizerFast, as Llama 3 has it, or none) runs tokenizer.json as it is.
// In every case the post-processor is the file's, unless tokenizer_config.json sets add_bos_token or
// add_eos_token: then it is bos + text + eos as those say (handled in tokenizer.ts). The added tokens
// are the file's, with tokenizer_config.json's added_tokens_decoder entries (by id) in their place for
// the classes above, which take them from there.
import type { JsonObject } from "./json-fields.ts";
import { isObject } from "./json-fields.ts";

const QWEN2_PATTERN = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/**
 * The parts of tokenizer.json a class's constructor rebuilds. Every field is the one the `tokenizers`
 * library writes for what the constructor builds, keys in its order: the model factory writes these
 * objects as they are into the tokenizer.json it saves (devtools/model-factory/saved-tokenizer-json.ts).
 */
export interface TransformersPipeline {
  readonly normalizer: JsonObject | null;
  readonly pre_tokenizer: JsonObject;
  readonly decoder: JsonObject;
  /** The BPE arguments besides vocab and merges; the others are BPE's defaults, not the file's. */
  readonly model: JsonObject;
}

/** The pipeline transformers rebuilds for this tokenizer_config.json; undefined where it runs the file. */
export function transformersPipeline(config: unknown): TransformersPipeline | undefined {
  if (!isObject(config)) return undefined;
  const cls =
    typeof config["tokenizer_class"] === "string" ? config["tokenizer_class"].replace(/Fast$/, "") : "";
  if (cls === "LlamaTokenizer") {
    const addPrefixSpace = config["add_prefix_space"] !== false;
    const scheme = !addPrefixSpace ? "never" : config["legacy"] === true ? "always" : "first";
    const decoders: JsonObject[] = [
      { type: "Replace", pattern: { String: "\u2581" }, content: " " },
      { type: "ByteFallback" },
      { type: "Fuse" },
    ];
    if (addPrefixSpace) decoders.push({ type: "Strip", content: " ", start: 1, stop: 0 });
    return {
      normalizer: null,
      pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: scheme, split: false },
      decoder: { type: "Sequence", decoders },
      model: { dropout: null, unk_token: null, fuse_unk: true, byte_fallback: true },
    };
  }
  if (cls === "GemmaTokenizer") {
    const unk = typeof config["unk_token"] === "string" ? config["unk_token"] : "<unk>";
    return {
      normalizer: { type: "Replace", pattern: { String: " " }, content: "\u2581" },
      pre_tokenizer: {
        type: "Split",
        pattern: { String: " " },
        behavior: "MergedWithPrevious",
        invert: false,
      },
      decoder: {
        type: "Sequence",
        decoders: [
          { type: "Replace", pattern: { String: "\u2581" }, content: " " },
          { type: "ByteFallback" },
          { type: "Fuse" },
        ],
      },
      model: { dropout: null, unk_token: unk, fuse_unk: true, byte_fallback: true },
    };
  }
  if (cls === "Qwen2Tokenizer") {
    return {
      normalizer: { type: "NFC" },
      pre_tokenizer: {
        type: "Sequence",
        pretokenizers: [
          { type: "Split", pattern: { Regex: QWEN2_PATTERN }, behavior: "Isolated", invert: false },
          {
            type: "ByteLevel",
            add_prefix_space: config["add_prefix_space"] === true,
            trim_offsets: true,
            use_regex: false,
          },
        ],
      },
      decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: {
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: "",
        end_of_word_suffix: "",
        fuse_unk: false,
        byte_fallback: false,
      },
    };
  }
  return undefined;
}

/** The tokenizer.json that transformers runs for this tokenizer_config.json (the same object if as is). */
export function asTransformersLoads(json: JsonObject, config: unknown): JsonObject {
  const pipeline = transformersPipeline(config);
  if (pipeline === undefined || !isObject(config) || !isObject(json["model"])) return json;
  const { vocab, merges } = json["model"];
  return {
    ...json,
    added_tokens: mergeAddedTokens(json["added_tokens"], config["added_tokens_decoder"]),
    normalizer: pipeline.normalizer,
    pre_tokenizer: pipeline.pre_tokenizer,
    decoder: pipeline.decoder,
    model: { type: "BPE", ...pipeline.model, vocab, merges },
  };
}

/** The file's added tokens, with the config's entries of the same id in their place and its others added. */
function mergeAddedTokens(fromFile: unknown, fromConfig: unknown): unknown {
  if (!Array.isArray(fromFile) || !isObject(fromConfig)) return fromFile;
  const byId = new Map<number, unknown>();
  for (const t of fromFile) if (isObject(t) && typeof t["id"] === "number") byId.set(t["id"], t);
  for (const [id, t] of Object.entries(fromConfig)) {
    if (isObject(t) && /^\d+$/.test(id)) byId.set(Number(id), { ...t, id: Number(id) });
  }
  return [...byId.values()];
}

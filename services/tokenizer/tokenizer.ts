// The tokenizer of a model, loaded from its Hugging Face tokenizer.json (+ tokenizer_config.json), giving
// the ids and text that transformers 5.18 gives for the same files.
//
// Supported tokenizer families (checked against transformers on the real files of Llama 2, Llama 3,
// Qwen 3 and Gemma 3, devtools/reference/tokenizers.py, and against @huggingface/tokenizers on
// generated texts):
// - byte-level BPE: GPT-2, Llama 3 (tiktoken-style 128k vocabulary), Qwen 2/2.5/3 (151k), Mistral-Nemo
//   style files: ByteLevel / Split pre-tokenizers, NFC-style normalizers, ignore_merges, ByteLevel
//   decoder;
// - SentencePiece-style BPE with byte fallback: Llama 2, TinyLlama, Mistral 7B v0.1-v0.3, Mixtral,
//   Gemma (1-3): Prepend / Replace / Strip / Sequence normalizers, Metaspace (prepend_scheme first,
//   always or never; split) and Split pre-tokenizers, byte_fallback, fuse_unk, unk_token; decoders
//   Replace, ByteFallback, Fuse, Strip, Metaspace and Sequences of them (decoder.ts);
// - post-processors TemplateProcessing, ByteLevel, Roberta/Bert and Sequences of them, overridden by
//   tokenizer_config.json's add_bos_token / add_eos_token as transformers does;
// - added tokens with special, lstrip, rstrip, normalized and single_word;
// - what transformers' tokenizer class does to the file (transformers-class.ts: LlamaTokenizer, for
//   one, replaces the file's normalizer with a Metaspace pre-tokenizer).
// decode honors skip_special_tokens; clean_up_tokenization_spaces is never applied, as transformers
// 5.18 ignores it for BPE models (it warns and skips the clean-up, whatever tokenizer_config.json says).
// Unigram, WordPiece and WordLevel models, and components not listed (Precompiled normalizers, BERT
// pre-tokenizers, CTC decoders...) are refused with UNIMPLEMENTED naming the part of tokenizer.json.
//
// Why our own and not npm's @huggingface/tokenizers (0.2.0, pure JS): it runs tokenizer.json as it is,
// where transformers rebuilds the pipeline of Llama-2-style tokenizers (" Hello" gets two "▁" there, one
// in transformers), it cleans up tokenization spaces by default where transformers does not ("   !"
// becomes "  !"), and it is 6 to 37 times slower (bench suite `tokenizer`). Owning the tokenizer also lets
// the streaming decoder (text-stream.ts) share the exact decoding steps.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type Result, TesseraError } from "../kernel/errors.ts";
import { type AddedToken, AddedTokenMatcher, parseAddedTokens, type Segment } from "./added-tokens.ts";
import { BpeModel } from "./bpe-model.ts";
import { byteLevelToBytes } from "./byte-level.ts";
import { type DecoderSpec, fallbackByte, PieceDecoder, parseDecoder } from "./decoder.ts";
import { invalid, isObject } from "./json-fields.ts";
import { type Normalizer, parseNormalizer } from "./normalizer.ts";
import { parsePostProcessor, type SpecialTemplate } from "./post-processor.ts";
import { isByteLevel, type PreTokenizer, parsePreTokenizer } from "./pre-tokenizer.ts";
import { TextStream } from "./text-stream.ts";
import { parseTokenizerConfig } from "./tokenizer-config.ts";
import { asTransformersLoads } from "./transformers-class.ts";

export { TextStream };

export interface EncodeOptions {
  /** Add the special tokens of the post-processor (e.g. bos before the text). Default false. */
  addSpecialTokens?: boolean;
  /** Find special tokens written in the text ("<s>" → its id). Default true, as Hugging Face does. */
  parseSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Leave out special tokens (bos, eos, pad, chat markers...). Default false. */
  skipSpecialTokens?: boolean;
}

const utf8Encoder = new TextEncoder();

interface Parts {
  model: BpeModel;
  added: AddedToken[];
  normalizer: Normalizer | undefined;
  preTokenizer: PreTokenizer;
  decoder: DecoderSpec;
  template: SpecialTemplate;
  bosTokenId: number | undefined;
  eosTokenId: number | undefined;
  padTokenId: number | undefined;
}

export class Tokenizer {
  /** One more than the highest id, of the model's vocabulary and the added tokens. */
  readonly vocabSize: number;
  readonly bosTokenId: number | undefined;
  readonly eosTokenId: number | undefined;
  readonly padTokenId: number | undefined;

  readonly #model: BpeModel;
  readonly #normalizer: Normalizer | undefined;
  readonly #preTokenizer: PreTokenizer;
  readonly #decoder: DecoderSpec;
  readonly #template: SpecialTemplate;
  readonly #addedById = new Map<number, AddedToken>();
  readonly #addedByContent = new Map<string, AddedToken>();
  readonly #specialContents = new Set<string>();
  readonly #rawMatcher: AddedTokenMatcher;
  readonly #normalizedMatcher: AddedTokenMatcher;
  readonly #bytes: (Uint8Array | undefined)[] = [];
  readonly #utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

  private constructor(parts: Parts) {
    this.#model = parts.model;
    this.#normalizer = parts.normalizer;
    this.#preTokenizer = parts.preTokenizer;
    this.#decoder = parts.decoder;
    this.#template = parts.template;
    this.bosTokenId = parts.bosTokenId;
    this.eosTokenId = parts.eosTokenId;
    this.padTokenId = parts.padTokenId;
    let maxId = parts.model.tokens.length - 1;
    for (const t of parts.added) {
      this.#addedById.set(t.id, t);
      this.#addedByContent.set(t.content, t);
      if (t.special) this.#specialContents.add(t.content);
      maxId = Math.max(maxId, t.id);
    }
    this.vocabSize = maxId + 1;
    this.#rawMatcher = new AddedTokenMatcher(parts.added.filter((t) => !t.normalized));
    // As in Hugging Face's AddedVocabulary, a `normalized` token is looked for in the normalized text
    // in its normalized form ("<s>" is "▁<s>" under a Prepend("▁") normalizer).
    const normalize = parts.normalizer ?? ((s: string) => s);
    this.#normalizedMatcher = new AddedTokenMatcher(
      parts.added.filter((t) => t.normalized).map((t) => ({ ...t, content: normalize(t.content) })),
    );
  }

  /**
   * Loads `dir/tokenizer.json` (and `dir/tokenizer_config.json` if there), or the tokenizer.json file
   * given (and the tokenizer_config.json beside it, if there). Synchronous: it runs once, at model load.
   */
  static fromFile(file: string): Tokenizer {
    const isDir = statSync(file, { throwIfNoEntry: false })?.isDirectory() === true;
    const tokenizerPath = isDir ? path.join(file, "tokenizer.json") : file;
    const configPath = path.join(path.dirname(tokenizerPath), "tokenizer_config.json");
    const json = readJson(tokenizerPath);
    if (json === undefined) throw TesseraError.notFound(`tokenizer file not found: ${tokenizerPath}`);
    return Tokenizer.fromJson(json, readJson(configPath));
  }

  /** Loads the tokenizer of a checkpoint folder (tokenizer.json and tokenizer_config.json): fromFile(dir). */
  static fromModelDir(dir: string): Tokenizer {
    return Tokenizer.fromFile(dir);
  }

  /** Builds a tokenizer from parsed tokenizer.json (and tokenizer_config.json); throws TesseraError. */
  static fromJson(tokenizerJson: unknown, configJson?: unknown): Tokenizer {
    const r = Tokenizer.parse(tokenizerJson, configJson);
    if (r.error) throw r.error;
    return r.value;
  }

  /** Like fromJson, but returns the error instead of throwing it. */
  static parse(fileJson: unknown, configJson?: unknown): Result<Tokenizer> {
    if (!isObject(fileJson)) return invalid("tokenizer.json", "must be an object");
    const json = asTransformersLoads(fileJson, configJson);
    // The model first: for a WordPiece or Unigram file, that is the part to name.
    const model = BpeModel.parse(json["model"], isByteLevel(json["pre_tokenizer"]));
    if (model.error) return model;
    const preTokenizer = parsePreTokenizer(json["pre_tokenizer"]);
    if (preTokenizer.error) return preTokenizer;
    const decoder = parseDecoder(json["decoder"]);
    if (decoder.error) return decoder;
    const parsedAdded = parseAddedTokens(json["added_tokens"]);
    if (parsedAdded.error) return parsedAdded;
    const normalizer = parseNormalizer(json["normalizer"]);
    if (normalizer.error) return normalizer;
    let template = parsePostProcessor(json["post_processor"]);
    if (template.error) return template;
    const config = parseTokenizerConfig(configJson);
    if (config.error) return config;
    // Like Hugging Face, a token that the model's vocabulary has keeps the vocabulary's id.
    const added = parsedAdded.value.map((t) => ({ ...t, id: model.value.vocab.get(t.content) ?? t.id }));
    // transformers makes the special tokens tokenizer_config.json names special added tokens.
    for (const content of config.value.namedSpecialTokens) {
      const id = model.value.vocab.get(content);
      if (id === undefined || added.some((t) => t.content === content)) continue;
      added.push({
        id,
        content,
        special: true,
        singleWord: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
      });
    }

    const idOf = (token: string | undefined): number | undefined =>
      token === undefined
        ? undefined
        : (added.find((t) => t.content === token)?.id ?? model.value.vocab.get(token));
    const { bosToken, eosToken, padToken, addBosToken, addEosToken } = config.value;
    const bosTokenId = idOf(bosToken);
    const eosTokenId = idOf(eosToken);
    if (addBosToken !== undefined || addEosToken !== undefined) {
      // transformers' Llama-style tokenizers rebuild the template from these flags.
      const prefix = addBosToken && bosTokenId !== undefined ? [bosTokenId] : [];
      const suffix = addEosToken && eosTokenId !== undefined ? [eosTokenId] : [];
      template = { value: { prefix, suffix } };
    }
    return {
      value: new Tokenizer({
        model: model.value,
        added,
        normalizer: normalizer.value,
        preTokenizer: preTokenizer.value,
        decoder: decoder.value,
        template: template.value,
        bosTokenId,
        eosTokenId,
        padTokenId: idOf(padToken),
      }),
    };
  }

  /** The ids of `text`. */
  encode(text: string, options: EncodeOptions = {}): number[] {
    const skipSpecial = options.parseSpecialTokens === false;
    const raw: Segment[] = [];
    this.#rawMatcher.split(text, skipSpecial, raw);
    const ids: number[] = options.addSpecialTokens ? [...this.#template.prefix] : [];
    const parts: Segment[] = [];
    for (let r = 0; r < raw.length; r++) {
      const segment = raw[r]!;
      if (typeof segment === "number") {
        ids.push(segment);
        continue;
      }
      parts.length = 0;
      const normalized = this.#normalizer ? this.#normalizer(segment) : segment;
      this.#normalizedMatcher.split(normalized, skipSpecial, parts);
      for (let p = 0; p < parts.length; p++) {
        const part = parts[p]!;
        if (typeof part === "number") ids.push(part);
        else {
          // Whether this part begins the input, for Metaspace's prepend_scheme "first".
          const atStart = r === 0 && p === 0;
          for (const word of this.#preTokenizer(part, atStart)) this.#model.encodeWord(word, ids);
        }
      }
    }
    if (options.addSpecialTokens) ids.push(...this.#template.suffix);
    return ids;
  }

  /**
   * The text of `ids`, as transformers' decode gives it (clean_up_tokenization_spaces never applies to
   * BPE there): bytes that are not valid UTF-8 become U+FFFD; ids outside the vocabulary add nothing.
   */
  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    if (this.#decoder.kind === "pieces") {
      const decoder = new PieceDecoder(this.#decoder.steps);
      let text = "";
      for (const id of ids) {
        const token = this.#checkedToken(id);
        if (token === undefined || (options.skipSpecialTokens && this.isSpecialToken(id))) continue;
        text += decoder.push(token);
      }
      return text + decoder.flush();
    }
    const chunks: Uint8Array[] = [];
    let length = 0;
    for (const id of ids) {
      const bytes = this.tokenBytes(id);
      if (options.skipSpecialTokens && this.isSpecialToken(id)) continue;
      chunks.push(bytes);
      length += bytes.length;
    }
    const all = new Uint8Array(length);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return this.#utf8.decode(all);
  }

  /**
   * A fresh piece decoder (decoder.ts) for SentencePiece-style decoders, undefined for byte-level ones
   * (whose ids decode through tokenBytes). TextStream uses it.
   */
  newPieceDecoder(): PieceDecoder | undefined {
    return this.#decoder.kind === "pieces" ? new PieceDecoder(this.#decoder.steps) : undefined;
  }

  /**
   * The vocabulary string of an id for decoding, undefined for an id the vocabulary does not hold (it
   * decodes to nothing); throws INVALID_ARGUMENT on a negative or non-integer id.
   */
  checkedToken(id: number): string | undefined {
    return this.#checkedToken(id);
  }

  #checkedToken(id: number): string | undefined {
    if (!Number.isInteger(id) || id < 0) {
      throw TesseraError.invalidArgument(
        "token_ids",
        `unknown token id ${id} (vocabulary size ${this.vocabSize})`,
      );
    }
    return this.idToToken(id);
  }

  /** A streaming decoder of this tokenizer (see text-stream.ts). */
  textStream(options: DecodeOptions = {}): TextStream {
    return new TextStream(this, options);
  }

  /** The vocabulary string of an id (byte-level, e.g. "Ġhello"), or undefined. */
  idToToken(id: number): string | undefined {
    return this.#addedById.get(id)?.content ?? this.#model.tokens[id];
  }

  /** The id of a vocabulary string or added token, or undefined. */
  tokenToId(token: string): number | undefined {
    return this.#addedByContent.get(token)?.id ?? this.#model.vocab.get(token);
  }

  /** Whether decode skips this id when asked to skip special tokens. */
  isSpecialToken(id: number): boolean {
    const token = this.idToToken(id);
    return token !== undefined && this.#specialContents.has(token);
  }

  /**
   * The bytes an id decodes to (possibly part of a UTF-8 character). An id the vocabulary does not
   * hold decodes to nothing, as in Hugging Face tokenizers: checkpoints often pad the model's
   * vocab_size beyond the tokenizer's, and a sampled padding id must not break the stream. Throws
   * INVALID_ARGUMENT on a negative or non-integer id.
   */
  tokenBytes(id: number): Uint8Array {
    const cached = this.#bytes[id];
    if (cached !== undefined) return cached;
    const token = this.#checkedToken(id);
    if (token === undefined) return NO_BYTES;
    let bytes: Uint8Array;
    if (this.#decoder.kind === "byteLevel") bytes = byteLevelToBytes(token);
    else {
      // A piece decoder's token on its own: "<0xE2>" is its byte, others their decoded text.
      const b = fallbackByte(token);
      bytes = b >= 0 ? Uint8Array.of(b) : utf8Encoder.encode(this.decode([id]));
    }
    this.#bytes[id] = bytes;
    return bytes;
  }
}

const NO_BYTES = new Uint8Array(0);

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw TesseraError.from(err);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw TesseraError.invalidArgument(file, `not valid JSON: ${(err as Error).message}`);
  }
}

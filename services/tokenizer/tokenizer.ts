// The tokenizer of a model, loaded from its Hugging Face tokenizer.json (+ tokenizer_config.json).
//
// Why our own and not npm's @huggingface/tokenizers (0.2.0, pure JS): on our reference fixtures it
// decodes one case wrongly out of the box ("   !" becomes "  !": it cleans up tokenization spaces by
// default where transformers does not for this config), and it is 3 to 5 times slower (100-170 ms to
// encode 100 KB of varied text, against 15-40 ms here). Byte-level BPE is small enough to own; owning it
// lets the streaming decoder (text-stream.ts) share the exact byte mapping, and it was checked against
// Hugging Face's Rust tokenizers 0.22 on tens of thousands of random texts (fixture, Llama-3 and Qwen3
// tokenizer.json files). Scope: byte-level BPE (GPT-2, Llama-3, Qwen2/3, Mistral-Nemo style tokenizers);
// SentencePiece-style (Metaspace, byte_fallback), WordPiece and Unigram tokenizers are rejected with
// UNIMPLEMENTED when loaded.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type Result, TesseraError } from "../kernel/errors.ts";
import { type AddedToken, AddedTokenMatcher, parseAddedTokens, type Segment } from "./added-tokens.ts";
import { BpeModel } from "./bpe-model.ts";
import { byteLevelToBytes } from "./byte-level.ts";
import { invalid, isObject, typeOf, unsupported } from "./json-fields.ts";
import { type Normalizer, parseNormalizer } from "./normalizer.ts";
import { parsePostProcessor, type SpecialTemplate } from "./post-processor.ts";
import { type PreTokenizer, parsePreTokenizer } from "./pre-tokenizer.ts";
import { TextStream } from "./text-stream.ts";
import { parseTokenizerConfig } from "./tokenizer-config.ts";

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

interface Parts {
  model: BpeModel;
  added: AddedToken[];
  normalizer: Normalizer | undefined;
  preTokenizer: PreTokenizer;
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
    this.#normalizedMatcher = new AddedTokenMatcher(parts.added.filter((t) => t.normalized));
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

  /** Builds a tokenizer from parsed tokenizer.json (and tokenizer_config.json); throws TesseraError. */
  static fromJson(tokenizerJson: unknown, configJson?: unknown): Tokenizer {
    const r = Tokenizer.parse(tokenizerJson, configJson);
    if (r.error) throw r.error;
    return r.value;
  }

  /** Like fromJson, but returns the error instead of throwing it. */
  static parse(json: unknown, configJson?: unknown): Result<Tokenizer> {
    if (!isObject(json)) return invalid("tokenizer.json", "must be an object");
    const decoder = json["decoder"];
    if (!isObject(decoder) || typeOf(decoder) !== "ByteLevel") {
      return unsupported("decoder", "a ByteLevel decoder is required (byte-level BPE)");
    }
    const model = BpeModel.parse(json["model"]);
    if (model.error) return model;
    const parsedAdded = parseAddedTokens(json["added_tokens"]);
    if (parsedAdded.error) return parsedAdded;
    // Like Hugging Face, a token that the model's vocabulary has keeps the vocabulary's id.
    const added = parsedAdded.value.map((t) => ({ ...t, id: model.value.vocab.get(t.content) ?? t.id }));
    const normalizer = parseNormalizer(json["normalizer"]);
    if (normalizer.error) return normalizer;
    const preTokenizer = parsePreTokenizer(json["pre_tokenizer"]);
    if (preTokenizer.error) return preTokenizer;
    let template = parsePostProcessor(json["post_processor"]);
    if (template.error) return template;
    const config = parseTokenizerConfig(configJson);
    if (config.error) return config;

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
    for (const segment of raw) {
      if (typeof segment === "number") {
        ids.push(segment);
        continue;
      }
      parts.length = 0;
      const normalized = this.#normalizer ? this.#normalizer(segment) : segment;
      this.#normalizedMatcher.split(normalized, skipSpecial, parts);
      for (const part of parts) {
        if (typeof part === "number") ids.push(part);
        else for (const word of this.#preTokenizer(part)) this.#model.encodeWord(word, ids);
      }
    }
    if (options.addSpecialTokens) ids.push(...this.#template.suffix);
    return ids;
  }

  /** The text of `ids`; bytes that are not valid UTF-8 become U+FFFD; ids outside the vocabulary add nothing. */
  decode(ids: readonly number[], options: DecodeOptions = {}): string {
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
    if (Number.isInteger(id) && id >= 0 && this.idToToken(id) === undefined) return NO_BYTES;
    const token = Number.isInteger(id) ? this.idToToken(id) : undefined;
    if (token === undefined) {
      throw TesseraError.invalidArgument(
        "token_ids",
        `unknown token id ${id} (vocabulary size ${this.vocabSize})`,
      );
    }
    const bytes = byteLevelToBytes(token);
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

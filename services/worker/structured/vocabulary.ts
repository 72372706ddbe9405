// The model's vocabulary as a grammar engine reads it: every token id's string as tokenizer.json stores
// it (byte-level BPE's "Ġ"-spelled bytes, SentencePiece's "▁" and <0xAB> pieces), and how those strings
// decode to text (xgrammar's vocab types). Loaded once per model from the checkpoint folder.
import { readFileSync } from "node:fs";
import path from "node:path";
import { Code, TesseraError } from "../../kernel/errors.ts";

export type VocabType = "byte_level" | "byte_fallback" | "raw";

export interface Vocabulary {
  /** The stored string of each id (added tokens included); "" for an id the file leaves unused. */
  tokens: string[];
  type: VocabType;
  /** SentencePiece's leading space ("▁" prepended to the text before tokenizing). */
  prependSpace: boolean;
}

interface TokenizerJson {
  model?: { type?: string; vocab?: Record<string, number> | [string, number][]; byte_fallback?: boolean };
  added_tokens?: { id: number; content: string }[];
  decoder?: unknown;
  pre_tokenizer?: unknown;
  normalizer?: unknown;
}

export function readVocabulary(modelDir: string): Vocabulary {
  const file = path.join(modelDir, "tokenizer.json");
  let json: TokenizerJson;
  try {
    json = JSON.parse(readFileSync(file, "utf8")) as TokenizerJson;
  } catch (err) {
    throw new TesseraError(Code.FAILED_PRECONDITION, `structured output needs ${file}: ${String(err)}`);
  }
  const tokens: string[] = [];
  const vocab = json.model?.vocab;
  // BPE and WordPiece store token -> id; Unigram a list of [piece, score] in id order.
  const entries: [string, number][] = Array.isArray(vocab)
    ? vocab.map(([piece], id) => [piece, id])
    : Object.entries(vocab ?? {});
  for (const [token, id] of entries) tokens[id] = token;
  for (const added of json.added_tokens ?? []) tokens[added.id] = added.content;
  for (let id = 0; id < tokens.length; id++) tokens[id] ??= "";
  const parts = JSON.stringify([json.decoder, json.pre_tokenizer, json.normalizer]);
  const type: VocabType = parts.includes('"ByteLevel"')
    ? "byte_level"
    : json.model?.byte_fallback === true || parts.includes('"ByteFallback"')
      ? "byte_fallback"
      : "raw";
  // SentencePiece-style: a Metaspace pre-tokenizer that prepends, or a normalizer that prepends "▁".
  const prependSpace =
    /"prepend_scheme":"(first|always)"/.test(parts) ||
    /"add_prefix_space":true[^}]*"type":"Metaspace"|"type":"Metaspace"[^}]*"add_prefix_space":true/.test(
      parts,
    ) ||
    /"type":"Prepend","prepend":"▁"/.test(parts);
  return { tokens, type, prependSpace };
}

// The tokenizer metadata llama.cpp needs, from a checkpoint's tokenizer.json: a byte-level BPE
// ("gpt2" in llama.cpp's words) with its tokens, their types and merges, as llama.cpp's
// convert_hf_to_gguf.py writes them. Ids the model has but the tokenizer lacks (the embedding table
// may be larger) become "[PAD<id>]" tokens of type UNUSED, as that script pads them.
import fs from "node:fs";
import path from "node:path";
import { bool, type GgufValue, int32s, str, strings, u32 } from "./gguf-writer.ts";

/** llama_token_type values. */
const TOKEN_TYPE = { normal: 1, control: 3, userDefined: 4, unused: 5 } as const;

interface TokenizerJson {
  added_tokens?: { id: number; content: string; special: boolean }[];
  pre_tokenizer?: { type?: string; use_regex?: boolean } | null;
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[] };
}

export interface SpecialIds {
  bos?: number | undefined;
  eos?: number | undefined;
  pad?: number | undefined;
}

/** tokenizer.ggml.* entries for the tokenizer.json in `modelDir`, padded to `vocabSize` tokens. */
export function tokenizerMetadata(
  modelDir: string,
  vocabSize: number,
  ids: SpecialIds,
): [string, GgufValue][] {
  const file = path.join(modelDir, "tokenizer.json");
  const tok = JSON.parse(fs.readFileSync(file, "utf8")) as TokenizerJson;
  if (tok.model.type !== "BPE") throw new Error(`${file}: model.type ${tok.model.type}; only BPE converts`);
  // llama.cpp names pre-tokenizers by the model family; a lone ByteLevel with its regex is GPT-2's.
  const pre = tok.pre_tokenizer;
  if (pre?.type !== "ByteLevel" || pre.use_regex === false)
    throw new Error(
      `${file}: pre_tokenizer ${JSON.stringify(pre)}; only a ByteLevel with GPT-2's regex converts`,
    );
  const tokens: (string | undefined)[] = new Array(vocabSize);
  const types: number[] = new Array(vocabSize).fill(TOKEN_TYPE.normal);
  for (const [piece, id] of Object.entries(tok.model.vocab)) if (id < vocabSize) tokens[id] = piece;
  for (const a of tok.added_tokens ?? []) {
    if (a.id >= vocabSize)
      throw new Error(`${file}: added token ${a.id} is past the model's ${vocabSize} ids`);
    tokens[a.id] = a.content;
    types[a.id] = a.special ? TOKEN_TYPE.control : TOKEN_TYPE.userDefined;
  }
  for (let i = 0; i < vocabSize; i++) {
    if (tokens[i] !== undefined) continue;
    tokens[i] = `[PAD${i}]`;
    types[i] = TOKEN_TYPE.unused;
  }
  const merges = tok.model.merges.map((m) => (typeof m === "string" ? m : `${m[0]} ${m[1]}`));
  const entries: [string, GgufValue][] = [
    ["tokenizer.ggml.model", str("gpt2")],
    ["tokenizer.ggml.pre", str("gpt-2")],
    ["tokenizer.ggml.tokens", strings(tokens as string[])],
    ["tokenizer.ggml.token_type", int32s(types)],
    ["tokenizer.ggml.merges", strings(merges)],
    // As the checkpoint's own post-processor: prompts carry no BOS unless the caller puts one there.
    ["tokenizer.ggml.add_bos_token", bool(false)],
  ];
  if (ids.bos !== undefined) entries.push(["tokenizer.ggml.bos_token_id", u32(ids.bos)]);
  if (ids.eos !== undefined) entries.push(["tokenizer.ggml.eos_token_id", u32(ids.eos)]);
  if (ids.pad !== undefined) entries.push(["tokenizer.ggml.padding_token_id", u32(ids.pad)]);
  return entries;
}

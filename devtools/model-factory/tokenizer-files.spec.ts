import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { preTokenize, type TrainedBpe } from "./bpe-trainer.ts";
import { CHAT_TEMPLATE, SPECIAL_TOKENS, tokenizerFileTexts, trainTokenizer } from "./tokenizer-files.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference/tiny-llama");

interface TokenizerJson {
  added_tokens: { id: number; content: string; special: boolean }[];
  model: { vocab: Record<string, number>; merges: [string, string][] };
}

/** Plain BPE over byte-level words, enough to check that merges and vocab agree. */
function encode(text: string, tok: TokenizerJson): number[] {
  const rank = new Map(tok.model.merges.map(([a, b], i) => [`${a} ${b}`, i]));
  const out: number[] = [];
  for (const word of preTokenize(text)) {
    let parts = [...word];
    for (;;) {
      let best = -1;
      let bestRank = Number.POSITIVE_INFINITY;
      for (let i = 0; i + 1 < parts.length; i++) {
        const r = rank.get(`${parts[i]} ${parts[i + 1]}`);
        if (r !== undefined && r < bestRank) [best, bestRank] = [i, r];
      }
      if (best < 0) break;
      parts = [...parts.slice(0, best), parts[best]! + parts[best + 1]!, ...parts.slice(best + 2)];
    }
    for (const p of parts) out.push(tok.model.vocab[p]!);
  }
  return out;
}

describe("tokenizer-files", () => {
  it("writes the reference tokenizer.json byte for byte from its vocab and merges", () => {
    const text = readFileSync(path.join(reference, "tokenizer.json"), "utf8");
    const ref = JSON.parse(text) as TokenizerJson;
    const vocab = Object.entries(ref.model.vocab)
      .sort((a, b) => a[1] - b[1])
      .map(([t]) => t);
    const bpe: TrainedBpe = { vocab, merges: ref.model.merges, specialTokens: SPECIAL_TOKENS };
    assert.equal(tokenizerFileTexts(bpe)["tokenizer.json"], text);
  });

  it("writes a tokenizer_config.json like the reference plus a ChatML chat template", () => {
    const ref = readFileSync(path.join(reference, "tokenizer_config.json"), "utf8");
    const ours = tokenizerFileTexts(trainTokenizer(512))["tokenizer_config.json"];
    const parsed = JSON.parse(ours) as Record<string, unknown>;
    assert.equal(parsed["chat_template"], CHAT_TEMPLATE);
    assert.match(CHAT_TEMPLATE, /'<\|im_start\|>' \+ message\['role'\] \+ '\\n'/);
    const withoutTemplate = ours.replace(/ {2}"chat_template": .*\n/, "");
    assert.equal(withoutTemplate, ref);
  });

  it("trains a 512-token tokenizer whose merges reproduce its vocab and round-trip text", () => {
    const texts = tokenizerFileTexts(trainTokenizer(512));
    const tok = JSON.parse(texts["tokenizer.json"]) as TokenizerJson;
    assert.equal(Object.keys(tok.model.vocab).length, 512);
    assert.equal(tok.model.merges.length, 512 - 259);
    assert.deepEqual(
      tok.added_tokens.map((t) => [t.id, t.content, t.special]),
      [
        [0, "<pad>", true],
        [1, "<s>", true],
        [2, "</s>", true],
      ],
    );
    const ids = encode("The lighthouse keeper wrote: café ☕ 42!", tok);
    assert.ok(ids.every((i) => Number.isInteger(i) && i >= 3 && i < 512));
    const byId = new Map(Object.entries(tok.model.vocab).map(([t, i]) => [i, t]));
    const chars = ids.map((i) => byId.get(i)).join("");
    assert.equal(chars, preTokenize("The lighthouse keeper wrote: café ☕ 42!").join(""));
    assert.ok(ids.length < chars.length, "merges shorten common text");
  });

  it("reaches the small preset's 2048 tokens and stops early below 8192", () => {
    assert.equal(trainTokenizer(2048).vocab.length, 2048);
    const big = trainTokenizer(8192).vocab.length;
    assert.ok(big > 2048 && big < 8192, String(big));
  });
});

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { BYTE_ALPHABET, countWords, preTokenize, trainByteLevelBpe } from "./bpe-trainer.ts";
import { CORPUS } from "./corpus.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference");

describe("bpe-trainer", () => {
  it("orders the alphabet as the reference tokenizer's ids 3..258", () => {
    const tok = JSON.parse(readFileSync(path.join(reference, "tiny-llama/tokenizer.json"), "utf8")) as {
      model: { vocab: Record<string, number> };
    };
    const byId = Object.entries(tok.model.vocab)
      .sort((a, b) => a[1] - b[1])
      .map(([t]) => t);
    assert.deepEqual(byId.slice(3, 259), BYTE_ALPHABET);
  });

  it("splits with the GPT-2 pattern and encodes UTF-8 bytes", () => {
    assert.deepEqual(preTokenize("Hello world, it's 2024!\n    x"), [
      "Hello",
      "Ġworld",
      ",",
      "Ġit",
      "'s",
      "Ġ2024",
      "!",
      "ĊĠĠĠ",
      "Ġx",
    ]);
    assert.deepEqual(preTokenize("é"), ["Ã©"]);
  });

  it("counts GPT-2 split byte-level words", () => {
    assert.deepEqual(
      [...countWords(["ab ab", " cd"])],
      [
        ["ab", 1],
        ["Ġab", 1],
        ["Ġcd", 1],
      ],
    );
  });

  it("merges the most frequent pair first and breaks ties by the smaller ids", () => {
    const r = trainByteLevelBpe(["ab ab ab cd"], { vocabSize: 300, specialTokens: ["<s>"], minFrequency: 1 });
    // (a,b)×3, then (Ġ,ab)×2, then (c,d) and (Ġ,c) tie at 1: "c" has a smaller id than "Ġ".
    assert.deepEqual(r.merges, [
      ["a", "b"],
      ["Ġ", "ab"],
      ["c", "d"],
      ["Ġ", "cd"],
    ]);
    assert.deepEqual(r.vocab.slice(257), ["ab", "Ġab", "cd", "Ġcd"]);
    assert.deepEqual(r.vocab.slice(0, 257), ["<s>", ...BYTE_ALPHABET]);
  });

  it("stops early when no pair is frequent enough", () => {
    const r = trainByteLevelBpe(["ab ab ab cd"], { vocabSize: 300, minFrequency: 2 });
    assert.deepEqual(r.merges, [
      ["a", "b"],
      ["Ġ", "ab"],
    ]);
    assert.equal(r.vocab.length, 258);
  });

  it("records a merge that re-creates an existing token without adding it twice", () => {
    // "ĠĠ"+"Ġ" and then "Ġ"+"ĠĠ" both spell "ĠĠĠ".
    const r = trainByteLevelBpe(["a   b", "a   b", "a    b"], { vocabSize: 300, minFrequency: 1 });
    const spelled = r.merges.map(([a, b]) => a + b);
    for (const t of spelled) assert.ok(r.vocab.includes(t), t);
    assert.equal(new Set(r.vocab).size, r.vocab.length);
  });

  it("trains on the embedded corpus deterministically", () => {
    const a = trainByteLevelBpe(CORPUS, {
      vocabSize: 8192,
      specialTokens: ["<pad>", "<s>", "</s>"],
      minFrequency: 1,
    });
    const b = trainByteLevelBpe(CORPUS, {
      vocabSize: 8192,
      specialTokens: ["<pad>", "<s>", "</s>"],
      minFrequency: 1,
    });
    assert.deepEqual(a, b);
    // Every merge joins two tokens that exist before the merged one.
    const id = new Map(a.vocab.map((t, i) => [t, i]));
    for (const [l, r] of a.merges) {
      const m = id.get(l + r)!;
      assert.ok(id.get(l)! < m && id.get(r)! < m, `${l} ${r}`);
    }
    assert.ok(a.vocab.length > 2048, `vocab ${a.vocab.length}`);
  });

  it("rejects a vocab smaller than the alphabet", () => {
    assert.throws(() => trainByteLevelBpe(["x"], { vocabSize: 100 }), /vocabSize/);
  });
});

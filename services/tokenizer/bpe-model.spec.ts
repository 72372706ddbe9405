import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { BpeModel, mergeSymbols } from "./bpe-model.ts";
import { PairTable } from "./pair-table.ts";

function model(json: Record<string, unknown>): BpeModel {
  const r = BpeModel.parse({ type: "BPE", ...json });
  if (r.error) throw r.error;
  return r.value;
}

function tokens(m: BpeModel, word: string): string[] {
  const ids: number[] = [];
  m.encodeWord(word, ids);
  return ids.map((id) => m.tokens[id]!);
}

const VOCAB = { a: 0, b: 1, c: 2, ab: 3, bc: 4, aa: 5, abc: 6, Ã: 7, "©": 8, "Ã©": 9, Ġ: 10, Ġa: 11 };

describe("BpeModel", () => {
  it("merges the lowest rank first, from merges given as strings or pairs", () => {
    for (const merges of [
      ["b c", "a b"],
      [
        ["b", "c"],
        ["a", "b"],
      ],
    ]) {
      const m = model({ vocab: VOCAB, merges });
      assert.deepEqual(tokens(m, "abc"), ["a", "bc"]);
      assert.deepEqual(tokens(m, "abab"), ["ab", "ab"]);
    }
  });

  it("merges the leftmost pair of equal rank first", () => {
    const m = model({ vocab: VOCAB, merges: ["a a"] });
    assert.deepEqual(tokens(m, "aaa"), ["aa", "a"]);
    assert.deepEqual(tokens(m, "aaaaa"), ["aa", "aa", "a"]);
  });

  it("maps text to byte-level symbols first", () => {
    const m = model({ vocab: VOCAB, merges: ["Ã ©", "Ġ a"] });
    assert.deepEqual(tokens(m, "é a"), ["Ã©", "Ġa"]);
  });

  it("takes a whole word from the vocabulary with ignore_merges", () => {
    assert.deepEqual(tokens(model({ vocab: VOCAB, merges: [] }), "abc"), ["a", "b", "c"]);
    assert.deepEqual(tokens(model({ vocab: VOCAB, merges: [], ignore_merges: true }), "abc"), ["abc"]);
  });

  it("drops bytes missing from the vocabulary, or gives unk, fused when asked", () => {
    assert.deepEqual(tokens(model({ vocab: VOCAB, merges: [] }), "axyb"), ["a", "b"]);
    const unk = { ...VOCAB, "<unk>": 20 };
    assert.deepEqual(tokens(model({ vocab: unk, merges: [], unk_token: "<unk>" }), "axyb"), [
      "a",
      "<unk>",
      "<unk>",
      "b",
    ]);
    assert.deepEqual(tokens(model({ vocab: unk, merges: [], unk_token: "<unk>", fuse_unk: true }), "axyb"), [
      "a",
      "<unk>",
      "b",
    ]);
  });

  it("gives the same ids from the cache", () => {
    const m = model({ vocab: VOCAB, merges: ["a b"] });
    assert.deepEqual(tokens(m, "abab"), tokens(m, "abab"));
  });

  it("rejects malformed or unsupported models, naming the field", () => {
    const bad = BpeModel.parse({ type: "BPE", vocab: VOCAB, merges: ["a x"] });
    assert.equal(bad.error?.code, Code.INVALID_ARGUMENT);
    assert.match(bad.error?.message ?? "", /^model\.merges\[0\]: \["a","x"\] is not in the vocabulary/);
    assert.match(
      BpeModel.parse({ type: "BPE", vocab: VOCAB, merges: ["ab"] }).error?.message ?? "",
      /merges\[0\]/,
    );
    assert.equal(BpeModel.parse({ type: "Unigram", vocab: [] }).error?.code, Code.UNIMPLEMENTED);
    assert.equal(BpeModel.parse({ vocab: VOCAB, merges: [], dropout: 0.1 }).error?.code, Code.UNIMPLEMENTED);
    assert.equal(BpeModel.parse({ vocab: { a: -1 }, merges: [] }).error?.code, Code.INVALID_ARGUMENT);
  });
});

describe("mergeSymbols", () => {
  /** The textbook loop: find the lowest-rank adjacent pair (leftmost on ties), merge it, repeat. */
  function naive(symbols: number[], merges: Map<string, [number, number]>): number[] {
    const s = symbols.slice();
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < s.length; i++) {
        const m = merges.get(`${s[i]},${s[i + 1]}`);
        if (m && m[0] < bestRank) {
          bestRank = m[0];
          best = i;
        }
      }
      if (best < 0) return s;
      s.splice(best, 2, merges.get(`${s[best]},${s[best + 1]}`)![1]);
    }
  }

  it("agrees with the textbook loop on random words and merges", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const alphabet = 2 + rand(4);
      const merges = new Map<string, [number, number]>();
      const table = new PairTable(64);
      const merged: number[] = [];
      let nextId = alphabet;
      for (let r = 0; r < 30; r++) {
        const a = rand(nextId);
        const b = rand(nextId);
        if (merges.has(`${a},${b}`)) continue;
        const rank = merged.length;
        merges.set(`${a},${b}`, [rank, nextId]);
        table.set(a, b, rank);
        merged.push(nextId++);
      }
      const word = Array.from({ length: rand(40) }, () => rand(alphabet));
      assert.deepEqual(
        mergeSymbols(word, table, Int32Array.from(merged)),
        naive(word, merges),
        `word ${word}`,
      );
    }
  });
});

describe("BpeModel on characters (SentencePiece-style)", () => {
  function charModel(json: Record<string, unknown>): BpeModel {
    const r = BpeModel.parse({ type: "BPE", ...json }, false);
    if (r.error) throw r.error;
    return r.value;
  }
  const BYTES = Object.fromEntries(
    Array.from({ length: 256 }, (_, b) => [`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`, 100 + b]),
  );

  it("falls back to the bytes of a character the vocabulary lacks, with byte_fallback", () => {
    const m = charModel({
      vocab: { ...BYTES, "▁": 0, a: 1, "▁a": 2 },
      merges: ["▁ a"],
      byte_fallback: true,
    });
    assert.deepEqual(tokens(m, "▁a€"), ["▁a", "<0xE2>", "<0x82>", "<0xAC>"]);
    assert.deepEqual(tokens(m, "😀"), ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]);
  });

  it("uses one unk for a run of unknown characters with fuse_unk, one each without", () => {
    const vocab = { "<unk>": 0, a: 1 };
    const fused = charModel({ vocab, merges: [], unk_token: "<unk>", fuse_unk: true });
    assert.deepEqual(tokens(fused, "a€€a€"), ["a", "<unk>", "a", "<unk>"]);
    const unfused = charModel({ vocab, merges: [], unk_token: "<unk>" });
    assert.deepEqual(tokens(unfused, "a€€a"), ["a", "<unk>", "<unk>", "a"]);
  });

  it("merges across a ▁ in a long word where the vocabulary has such a token", () => {
    // "x▁y" crosses the space mark, so a long word must not be cut before that ▁; "a▁" crosses nothing.
    const vocab = { "▁": 0, x: 1, y: 2, a: 3, "▁y": 4, "x▁": 5, "x▁y": 6, "▁a": 7 };
    const m = charModel({ vocab, merges: ["x ▁", "x▁ y", "▁ y", "▁ a"] });
    const word = "▁a▁a▁a▁a▁a▁a▁a▁a▁ax▁y▁y";
    assert.ok(word.length > 16);
    assert.deepEqual(tokens(m, word), [...Array(9).fill("▁a"), "x▁y", "▁y"]);
  });
});

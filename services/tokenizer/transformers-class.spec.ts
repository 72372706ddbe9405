import assert from "node:assert/strict";
import { asTransformersLoads } from "./transformers-class.ts";

const FILE = {
  version: "1.0",
  added_tokens: [{ id: 1, content: "<s>", special: true, normalized: true }],
  normalizer: { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" }] },
  pre_tokenizer: null,
  post_processor: null,
  decoder: { type: "Metaspace" },
  model: {
    type: "BPE",
    vocab: { "<unk>": 0, "<s>": 1 },
    merges: [],
    unk_token: "<unk>",
    ignore_merges: true,
  },
};

describe("asTransformersLoads", () => {
  it("runs the file as it is for other classes, or without a tokenizer_config.json", () => {
    assert.equal(asTransformersLoads(FILE, undefined), FILE);
    assert.equal(asTransformersLoads(FILE, { tokenizer_class: "PreTrainedTokenizerFast" }), FILE);
    assert.equal(asTransformersLoads(FILE, { tokenizer_class: "TokenizersBackend" }), FILE);
  });

  it("rebuilds LlamaTokenizer's pipeline: Metaspace by legacy and add_prefix_space, no unk, byte fallback", () => {
    const modern = asTransformersLoads(FILE, { tokenizer_class: "LlamaTokenizerFast" });
    assert.equal(modern["normalizer"], null);
    assert.deepEqual(modern["pre_tokenizer"], {
      type: "Metaspace",
      replacement: "▁",
      prepend_scheme: "first",
      split: false,
    });
    assert.deepEqual(modern["model"], {
      type: "BPE",
      vocab: FILE.model.vocab,
      merges: [],
      dropout: null,
      unk_token: null,
      fuse_unk: true,
      byte_fallback: true,
    });
    const decoders = (modern["decoder"] as { decoders: { type: string }[] }).decoders.map((d) => d.type);
    assert.deepEqual(decoders, ["Replace", "ByteFallback", "Fuse", "Strip"]);
    const legacy = asTransformersLoads(FILE, { tokenizer_class: "LlamaTokenizer", legacy: true });
    assert.equal((legacy["pre_tokenizer"] as { prepend_scheme: string }).prepend_scheme, "always");
    const noPrefix = asTransformersLoads(FILE, {
      tokenizer_class: "LlamaTokenizer",
      add_prefix_space: false,
    });
    assert.equal((noPrefix["pre_tokenizer"] as { prepend_scheme: string }).prepend_scheme, "never");
    const noStrip = (noPrefix["decoder"] as { decoders: { type: string }[] }).decoders.map((d) => d.type);
    assert.deepEqual(noStrip, ["Replace", "ByteFallback", "Fuse"]);
  });

  it("takes the added tokens of tokenizer_config.json's added_tokens_decoder for a rebuilt class", () => {
    const loaded = asTransformersLoads(FILE, {
      tokenizer_class: "GemmaTokenizer",
      added_tokens_decoder: {
        "1": { content: "<s>", special: true, normalized: false },
        "7": { content: "<x>" },
      },
    });
    assert.deepEqual(loaded["added_tokens"], [
      { id: 1, content: "<s>", special: true, normalized: false },
      { id: 7, content: "<x>" },
    ]);
    assert.equal((loaded["model"] as { unk_token: string }).unk_token, "<unk>");
  });

  it("rebuilds Qwen2Tokenizer as byte-level BPE with NFC", () => {
    const loaded = asTransformersLoads(FILE, { tokenizer_class: "Qwen2Tokenizer" });
    assert.deepEqual(loaded["normalizer"], { type: "NFC" });
    assert.deepEqual(loaded["decoder"], {
      type: "ByteLevel",
      add_prefix_space: true,
      trim_offsets: true,
      use_regex: true,
    });
    const model = loaded["model"] as Record<string, unknown>;
    assert.equal(model["ignore_merges"], undefined, "BPE's default, not the file's");
    assert.equal(model["continuing_subword_prefix"], "");
  });
});

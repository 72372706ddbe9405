import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { parseTokenizerConfig } from "./tokenizer-config.ts";

describe("parseTokenizerConfig", () => {
  it("reads token names, as strings or AddedToken objects, and the add_* flags", () => {
    const r = parseTokenizerConfig({
      bos_token: { content: "<s>", lstrip: false },
      eos_token: "</s>",
      pad_token: null,
      add_bos_token: true,
      model_max_length: 4096,
    });
    assert.deepEqual(r.value, {
      bosToken: "<s>",
      eosToken: "</s>",
      addBosToken: true,
      namedSpecialTokens: ["<s>", "</s>"],
    });
  });

  it("lists every special token it names, additional_special_tokens included", () => {
    const r = parseTokenizerConfig({
      eos_token: "<|im_end|>",
      unk_token: null,
      pad_token: "<|endoftext|>",
      additional_special_tokens: ["<|im_start|>", { content: "<tool>" }],
    });
    assert.deepEqual(r.value?.namedSpecialTokens, ["<|im_end|>", "<|endoftext|>", "<|im_start|>", "<tool>"]);
  });

  it("is empty without a file", () => {
    assert.deepEqual(parseTokenizerConfig(undefined).value, { namedSpecialTokens: [] });
  });

  it("rejects wrong types, naming the key", () => {
    const r = parseTokenizerConfig({ add_eos_token: "yes" });
    assert.equal(r.error?.code, Code.INVALID_ARGUMENT);
    assert.match(r.error?.message ?? "", /^tokenizer_config\.add_eos_token/);
  });
});

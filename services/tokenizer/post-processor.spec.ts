import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { NO_SPECIAL_TOKENS, parsePostProcessor } from "./post-processor.ts";

const LLAMA3_TEMPLATE = {
  type: "TemplateProcessing",
  single: [{ SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
  pair: [],
  special_tokens: {
    "<|begin_of_text|>": { id: "<|begin_of_text|>", ids: [128000], tokens: ["<|begin_of_text|>"] },
  },
};

describe("parsePostProcessor", () => {
  it("adds nothing for null or ByteLevel", () => {
    assert.deepEqual(parsePostProcessor(null).value, NO_SPECIAL_TOKENS);
    assert.deepEqual(parsePostProcessor({ type: "ByteLevel", trim_offsets: false }).value, NO_SPECIAL_TOKENS);
  });

  it("reads the single template of TemplateProcessing", () => {
    assert.deepEqual(parsePostProcessor(LLAMA3_TEMPLATE).value, { prefix: [128000], suffix: [] });
    const withEos = {
      ...LLAMA3_TEMPLATE,
      single: [...LLAMA3_TEMPLATE.single, { SpecialToken: { id: "</s>", type_id: 0 } }],
      special_tokens: {
        ...LLAMA3_TEMPLATE.special_tokens,
        "</s>": { id: "</s>", ids: [2], tokens: ["</s>"] },
      },
    };
    assert.deepEqual(parsePostProcessor(withEos).value, { prefix: [128000], suffix: [2] });
  });

  it("reads Roberta's cls and sep, and a Sequence", () => {
    const roberta = { type: "RobertaProcessing", cls: ["<s>", 0], sep: ["</s>", 2] };
    assert.deepEqual(parsePostProcessor(roberta).value, { prefix: [0], suffix: [2] });
    const seq = { type: "Sequence", processors: [{ type: "ByteLevel" }, LLAMA3_TEMPLATE] };
    assert.deepEqual(parsePostProcessor(seq).value, { prefix: [128000], suffix: [] });
  });

  it("rejects broken templates and unknown processors", () => {
    const noIds = { ...LLAMA3_TEMPLATE, special_tokens: {} };
    assert.match(parsePostProcessor(noIds).error?.message ?? "", /^post_processor\.special_tokens/);
    assert.equal(parsePostProcessor({ type: "Whatever" }).error?.code, Code.UNIMPLEMENTED);
  });
});

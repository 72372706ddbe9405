import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema } from "../../proto/gen/tessera/v1/inference_pb.js";
import { Code } from "../kernel/errors.ts";
import { checkPromptIds, resolveModel, toEngineRequest } from "./generate-request.ts";
import type { ServedModel } from "./served-model.ts";

const model: ServedModel = {
  description: { id: "m", architecture: "LlamaForCausalLM", maxContext: 8, vocabSize: 10, dtype: "float32" },
  tokenizer: { vocabSize: 10, encode: (text) => [1, ...[...text].map(() => 5)], decode: () => "" },
  generate: async function* () {},
};

describe("toEngineRequest", () => {
  it("tokenizes a text prompt with special tokens and applies the proto's sampling defaults", () => {
    const message = create(GenerateRequestSchema, { prompt: { case: "text", value: "abc" } });
    const { value } = toEngineRequest(message, model, "r");
    assert.deepEqual(value?.promptIds, [1, 5, 5, 5]);
    assert.equal(value?.requestId, "r");
    assert.equal(value?.sampling.maxTokens, 16);
    assert.equal(value?.sampling.temperature, 0);
    assert.equal(value?.sampling.topP, 1);
  });

  it("passes token ids and sampling fields through", () => {
    const message = create(GenerateRequestSchema, {
      model: "m",
      prompt: { case: "tokenIds", value: { ids: [3, 4] } },
      sampling: {
        maxTokens: 3,
        temperature: 0.5,
        topK: 4,
        seed: 9n,
        stop: ["x"],
        logprobs: 2,
        disableSpeculation: true,
      },
    });
    const { value } = toEngineRequest(message, model, "r");
    assert.deepEqual(value?.promptIds, [3, 4]);
    const expected = {
      maxTokens: 3,
      temperature: 0.5,
      topP: 1,
      topK: 4,
      seed: 9n,
      stop: ["x"],
      logprobs: 2,
      disableSpeculation: true,
    };
    const sampling: Record<string, unknown> = { ...value?.sampling };
    for (const [field, want] of Object.entries(expected)) assert.deepEqual(sampling[field], want, field);
  });

  it("names the sampling field at fault", () => {
    const message = create(GenerateRequestSchema, {
      prompt: { case: "text", value: "a" },
      sampling: { topK: -1 },
    });
    assert.match(toEngineRequest(message, model, "r").error?.message ?? "", /^top_k: /);
  });
});

describe("checkPromptIds", () => {
  it("accepts ids inside the vocabulary that leave room to generate", () => {
    assert.deepEqual(checkPromptIds([0, 9, 1], model.description).value, [0, 9, 1]);
  });

  const bad: [string, number[], RegExp][] = [
    ["an empty prompt", [], /^token_ids: must not be empty$/],
    ["an id past the vocabulary", [1, 10], /^token_ids\[1\]: 10 is outside the vocabulary \(ids 0\.\.9\)$/],
    [
      "a prompt that fills the context",
      new Array(8).fill(1),
      /^prompt: 8 tokens do not fit the model's context of 8/,
    ],
  ];
  for (const [name, ids, message] of bad) {
    it(`rejects ${name}`, () => {
      const { error } = checkPromptIds(ids, model.description);
      assert.equal(error?.code, Code.INVALID_ARGUMENT);
      assert.match(error?.message ?? "", message);
    });
  }
});

describe("resolveModel", () => {
  it("takes an empty name or the model's id, and answers NOT_FOUND otherwise", () => {
    assert.equal(resolveModel("", model).value, model);
    assert.equal(resolveModel("m", model).value, model);
    assert.equal(resolveModel("other", model).error?.code, Code.NOT_FOUND);
  });
});

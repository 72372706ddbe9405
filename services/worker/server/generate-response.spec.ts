import assert from "node:assert/strict";
import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import type { ServedTokenizer } from "../../inference/served-model.ts";
import { toGenerateResponse } from "./generate-response.ts";

const tokenizer: ServedTokenizer = {
  vocabSize: 100,
  encode: () => [],
  decode: (ids) => ids.map((id) => `<${id}>`).join(""),
};

describe("toGenerateResponse", () => {
  it("maps a tokens event with its top logprobs and their text", () => {
    const response = toGenerateResponse(
      {
        type: "tokens",
        tokens: [
          {
            tokenId: 5,
            logprob: -0.5,
            top: [
              { tokenId: 5, logprob: -0.5 },
              { tokenId: 9, logprob: -1.5 },
            ],
          },
        ],
        textDelta: "<5>",
      },
      "r1",
      tokenizer,
    );
    assert.equal(response.requestId, "r1");
    assert.equal(response.textDelta, "<5>");
    assert.equal(response.finishReason, FinishReason.UNSPECIFIED);
    assert.equal(response.usage, undefined);
    assert.equal(response.tokens[0]?.tokenId, 5);
    assert.deepEqual(
      response.tokens[0]?.topLogprobs.map(({ tokenId, logprob, text }) => ({ tokenId, logprob, text })),
      [
        { tokenId: 5, logprob: -0.5, text: "<5>" },
        { tokenId: 9, logprob: -1.5, text: "<9>" },
      ],
    );
  });

  it("maps the finish event with its reason and usage", () => {
    const response = toGenerateResponse(
      {
        type: "finish",
        reason: "stop_string",
        usage: { promptTokens: 3, completionTokens: 4 },
        textDelta: "",
      },
      "r1",
      tokenizer,
    );
    assert.equal(response.finishReason, FinishReason.STOP_STRING);
    assert.equal(response.tokens.length, 0);
    assert.equal(response.usage?.promptTokens, 3);
    assert.equal(response.usage?.completionTokens, 4);
    assert.equal(response.usage?.totalTokens, 7);
  });
});

import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { FinishReason, GenerateResponseSchema } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { ModelRegistry } from "../models/model-registry.ts";
import { testModel } from "../testing/models.ts";
import { Choices } from "./choices.ts";
import { resumable } from "./continuation.ts";
import { prepareRequest } from "./prepare-request.ts";

const model = testModel();
const { tokenizer } = model;
const promptText = "Tell me a story";
const story = tokenizer.encode(" and then the story went on. END here", { addSpecialTokens: false });

function choices(sampling: Record<string, unknown>) {
  const prepared = prepareRequest(
    { requestId: "r", model: "", prompt: { type: "text", text: promptText }, sampling },
    new ModelRegistry([model]),
    { prefixBlocks: 4 },
  ).value!;
  return { c: new Choices(prepared), prepared };
}

const tokens = (index: number, ...ids: number[]) =>
  create(GenerateResponseSchema, { index, tokens: ids.map((tokenId) => ({ tokenId })) });
const finish = (index: number) =>
  create(GenerateResponseSchema, {
    index,
    finishReason: FinishReason.LENGTH,
    usage: { promptTokens: 5, completionTokens: 2 },
  });

describe("Choices (a request's sequences at the router)", () => {
  it("follows each sequence by its index, with its own text and stop strings; done once all are", () => {
    const { c } = choices({ maxTokens: 40, n: 2, stop: ["END"] });
    const first = c.accept(tokens(1, ...story), "whole");
    assert.equal(first.at(-1)?.type, "finish", "sequence 1 met its stop string");
    assert.ok(first.every((e) => e.index === 1));
    assert.equal(
      first.map((e) => e.text).join(""),
      tokenizer.decode(story).slice(0, tokenizer.decode(story).indexOf("END")),
    );
    assert.equal(c.done, false);
    const zero = c.accept(tokens(0, story[0]!, story[1]!), "whole");
    assert.deepEqual(
      zero.map((e) => e.index),
      [0],
    );
    c.accept(finish(0), "whole");
    assert.equal(c.done, true);
    assert.deepEqual(c.accept(tokens(7, 1), "whole"), [], "an index past n is dropped");
  });

  it("echo opens each sequence's text with the prompt; prompt logprobs ride on sequence 0's first event", () => {
    const { c } = choices({ maxTokens: 4, n: 2, echo: true });
    const withPrompt = create(GenerateResponseSchema, {
      index: 0,
      tokens: [{ tokenId: story[0]! }],
      promptLogprobs: [{ tokenId: 1, logprob: Number.NaN }],
    });
    const [zero] = c.accept(withPrompt, "whole");
    assert.equal(zero?.text, promptText + tokenizer.decode([story[0]!]));
    assert.equal(zero?.type === "tokens" && zero.promptTokens?.length, 1);
    const [one] = c.accept(tokens(1, story[1]!), "whole");
    assert.ok(one?.text.startsWith(promptText));
    const [again] = c.accept(tokens(1, story[2]!), "whole");
    assert.ok(!again?.text.startsWith(promptText), "once per sequence");
  });

  it("asks the worker for every sequence in one segment, never split or moved", () => {
    const { c, prepared } = choices({ maxTokens: 4, n: 3, bestOf: 5, seed: 9 });
    const segment = c.segment("whole");
    assert.deepEqual([segment.sampling.n, segment.sampling.bestOf, segment.sampling.seed], [3, 5, 9n]);
    assert.equal(resumable(prepared.sampling), false);
    assert.equal(resumable(choices({ maxTokens: 4, promptLogprobs: 0 }).prepared.sampling), false);
    assert.equal(resumable(choices({ maxTokens: 4 }).prepared.sampling), true);
  });
});

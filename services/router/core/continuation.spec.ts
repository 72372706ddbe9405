import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { FinishReason, GenerateResponseSchema } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { ModelRegistry } from "../models/model-registry.ts";
import { testModel } from "../testing/models.ts";
import { Continuation, resumable } from "./continuation.ts";
import { prepareRequest } from "./prepare-request.ts";
import type { RouterEvent } from "./router-events.ts";

const model = testModel();
const { tokenizer } = model;
const prompt = tokenizer.encode("The prompt of this request, a little over two blocks long.", {
  addSpecialTokens: true,
});
const output = tokenizer.encode(" and then the story went on", { addSpecialTokens: false });

function continuation(sampling: Record<string, unknown>): Continuation {
  const prepared = prepareRequest(
    { requestId: "r", model: "", prompt: { type: "tokens", ids: prompt }, sampling },
    new ModelRegistry([model]),
    { prefixBlocks: 4 },
  );
  return new Continuation(prepared.value!);
}

const tokens = (...ids: number[]) =>
  create(GenerateResponseSchema, { tokens: ids.map((tokenId) => ({ tokenId })) });
const finish = (reason: FinishReason) => create(GenerateResponseSchema, { finishReason: reason });
const text = (events: RouterEvent[]) => events.map((e) => e.text).join("");

describe("Continuation", () => {
  it("asks a prefill for one token and its blocks stored, then the decode for the rest", () => {
    const c = continuation({ maxTokens: 6 });
    assert.deepEqual(c.segment("prefill").sampling.maxTokens, 1);
    assert.deepEqual(c.segment("prefill").kv, { expectedRemoteBlocks: 0, awaitWrites: true });
    const first = c.accept(tokens(output[0]!), "prefill");
    assert.equal(first.length, 1);
    assert.deepEqual(c.accept(finish(FinishReason.LENGTH), "prefill"), [], "the cap of 1 is not the end");
    assert.equal(c.done, false);
    const rest = c.segment("continue");
    assert.deepEqual(rest.promptIds, [...prompt, output[0]]);
    assert.equal(rest.sampling.maxTokens, 5);
    assert.deepEqual(rest.kv, { expectedRemoteBlocks: Math.floor(prompt.length / 16), awaitWrites: false });
  });

  it("counts min_tokens over the whole request: the prefill holds back its one token, later segments the rest", () => {
    const c = continuation({ maxTokens: 6, minTokens: 4 });
    assert.equal(c.segment("prefill").sampling.minTokens, 1);
    c.accept(tokens(output[0]!), "prefill");
    c.accept(finish(FinishReason.LENGTH), "prefill");
    assert.equal(c.segment("continue").sampling.minTokens, 3);
    c.accept(tokens(output[1]!, output[2]!, output[3]!), "continue");
    assert.equal(c.segment("continue").sampling.minTokens, 0, "reached: nothing left to hold back");
    assert.equal(continuation({ maxTokens: 6 }).segment("prefill").sampling.minTokens, 0);
  });

  it("ends with the usage of the original prompt and every token streamed, across segments", () => {
    const c = continuation({ maxTokens: 4 });
    const events = [
      ...c.accept(tokens(output[0]!), "prefill"),
      ...c.accept(finish(FinishReason.LENGTH), "prefill"),
      ...c.accept(tokens(output[1]!, output[2]!), "continue"),
      ...c.accept(tokens(output[3]!), "continue"),
      ...c.accept(finish(FinishReason.LENGTH), "continue"),
    ];
    assert.equal(text(events), tokenizer.decode(output.slice(0, 4)));
    assert.deepEqual(events.at(-1), {
      type: "finish",
      reason: FinishReason.LENGTH,
      usage: { promptTokens: prompt.length, completionTokens: 4 },
      text: "",
    });
    assert.ok(c.done);
    assert.deepEqual(c.accept(tokens(output[4]!), "continue"), [], "nothing after the end");
  });

  it("finds a stop string split between two workers' tokens and ends there itself", () => {
    const whole = tokenizer.decode(output);
    const cut = tokenizer.decode(output.slice(0, 3)).length;
    const stop = whole.slice(cut - 2, cut + 2);
    const c = continuation({ maxTokens: 16, stop: [stop] });
    const events = [
      ...c.accept(tokens(...output.slice(0, 3)), "whole"),
      ...c.accept(tokens(...output.slice(3)), "continue"),
    ];
    assert.equal(text(events), whole.slice(0, cut - 2));
    const last = events.at(-1);
    assert.equal(last?.type === "finish" && last.reason, FinishReason.STOP_STRING);
    assert.ok(c.generated.length < output.length, "tokens after the stop string are dropped");
  });

  it("calls a request resumable unless its penalties count its own output", () => {
    const base = continuation({}).segment("whole").sampling;
    assert.ok(resumable(base));
    assert.ok(resumable({ ...base, repetitionPenalty: 1.2 }));
    assert.ok(!resumable({ ...base, presencePenalty: 0.5 }));
    assert.ok(!resumable({ ...base, frequencyPenalty: 0.5 }));
  });
});

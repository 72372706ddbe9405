import assert from "node:assert/strict";
import { prefixBlockHashes } from "../../inference/block-hash.ts";
import { Code } from "../../kernel/errors.ts";
import { OPENAI_SAMPLING_DEFAULTS } from "../http/openai-request.ts";
import { ModelRegistry } from "../models/model-registry.ts";
import { positionOfHex } from "../routing/hash-ring.ts";
import { testModel, workerInfo } from "../testing/models.ts";
import { prepareRequest } from "./prepare-request.ts";
import type { RouterRequest } from "./router-request.ts";

const request = (fields: Partial<RouterRequest> = {}): RouterRequest => ({
  requestId: "r",
  model: "",
  prompt: { type: "text", text: "Hello world" },
  sampling: {},
  ...fields,
});

describe("prepareRequest", () => {
  const models = new ModelRegistry([testModel({ maxTokens: 32, chat: true })]);
  const prepare = (fields: Partial<RouterRequest> = {}) =>
    prepareRequest(request(fields), models, { prefixBlocks: 2 });

  it("tokenizes text with the special tokens, validates sampling and keys by the workers' block hashes", () => {
    const prepared = prepare({ prompt: { type: "tokens", ids: Array.from({ length: 40 }, (_, i) => i + 3) } })
      .value!;
    assert.equal(prepared.sampling.maxTokens, 16, "the proto default");
    const hashes = prefixBlockHashes(prepared.promptIds, 16, "tiny@rev1");
    assert.deepEqual(prepared.key.blockHashes, hashes);
    assert.equal(prepared.key.position, positionOfHex(hashes[1]!));
    const text = prepare().value!;
    const { tokenizer } = models.models[0]!;
    assert.deepEqual(
      text.promptIds,
      tokenizer.encode("Hello world", { addSpecialTokens: true }),
      "as the workers do",
    );
  });

  it("gives unset sampling fields the model's defaults, else the front door's, and keeps explicit zeros", () => {
    const recommending = testModel();
    recommending.info = { ...workerInfo, samplingDefaults: { temperature: 0.6, topP: 0.9, topK: 20 } };
    const withDefaults = new ModelRegistry([recommending]);
    const run = (registry: ModelRegistry, fields: Partial<RouterRequest>) =>
      prepareRequest(request(fields), registry, { prefixBlocks: 2 }).value!.sampling;
    const openAi = { apiSamplingDefaults: OPENAI_SAMPLING_DEFAULTS };

    const followed = run(withDefaults, openAi);
    assert.deepEqual([followed.temperature, followed.topP, followed.topK], [0.6, 0.9, 20]);
    const greedy = run(withDefaults, { ...openAi, sampling: { temperature: 0, topK: 0 } });
    assert.deepEqual([greedy.temperature, greedy.topP, greedy.topK], [0, 0.9, 0]);
    // A model without defaults: OpenAI's temperature 1 over HTTP, the proto's greedy over gRPC.
    assert.equal(run(models, openAi).temperature, 1);
    assert.equal(run(models, {}).temperature, 0);
    assert.equal(run(withDefaults, {}).temperature, 0.6);
  });

  it("renders chat messages with the model's template, without adding special tokens", () => {
    const prepared = prepare({ prompt: { type: "chat", messages: [{ role: "user", content: "Hi" }] } })
      .value!;
    assert.equal(models.models[0]!.tokenizer.decode(prepared.promptIds), "[user] Hi\n[assistant] ");
  });

  it("refuses bad requests naming the field, before any work", () => {
    const error = (fields: Partial<RouterRequest>) => prepare(fields).error?.message ?? "";
    assert.match(error({ prompt: { type: "text", text: "" } }), /^text: must not be empty/);
    assert.match(
      error({ prompt: { type: "tokens", ids: new Array(64).fill(5) } }),
      /^prompt: 64 tokens do not fit the model's context of 64/,
    );
    assert.match(error({ prompt: { type: "tokens", ids: [1, 1_000_000] } }), /^token_ids\[1\]: /);
    assert.match(error({ sampling: { maxTokens: 33 } }), /^max_tokens: must be <= 32/);
    assert.match(error({ sampling: { topP: 2 } }), /^top_p: /);
    assert.match(error({ prompt: { type: "chat", messages: [] } }), /^messages: must not be empty/);
    assert.equal(prepare({ model: "other" }).error?.code, Code.NOT_FOUND);
  });

  it("is UNAVAILABLE with a retry hint until a worker has reported the model", () => {
    const waiting = new ModelRegistry([testModel({ reported: false })]);
    const error = prepareRequest(request(), waiting, { prefixBlocks: 2 }).error;
    assert.equal(error?.code, Code.UNAVAILABLE);
    assert.ok((error?.retryAfterMs ?? 0) > 0);
  });

  it("needs a chat template for chat messages", () => {
    const plain = new ModelRegistry([testModel()]);
    const error = prepareRequest(
      request({ prompt: { type: "chat", messages: [{ role: "user", content: "x" }] } }),
      plain,
      { prefixBlocks: 2 },
    ).error;
    assert.match(error?.message ?? "", /^messages: model "tiny" has no chat template/);
  });
});

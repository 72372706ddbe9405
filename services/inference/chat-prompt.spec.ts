import assert from "node:assert/strict";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type ChatPromptSchema, GenerateRequestSchema } from "../../proto/gen/tessera/v1/inference_pb.js";
import { ChatTemplate } from "./chat-template.ts";
import { toEngineRequest } from "./generate-request.ts";
import type { ServedModel } from "./served-model.ts";

type Chat = Omit<MessageInitShape<typeof ChatPromptSchema>, "$typeName">;

// A worker's Generate with a chat prompt: the text the template renders, tokenized without the
// tokenizer's special tokens (this tokenizer adds id 1 when asked to).
const template = new ChatTemplate(
  "{{ bos_token }}{% for m in messages %}{{ m.role[0] }}:{{ m.content }};{% endfor %}" +
    "{% if add_generation_prompt %}a:{% if short %}!{% endif %}{% endif %}",
  { bos_token: "b" },
);
const model = (chatTemplate: ChatTemplate | undefined, maxContext = 64): ServedModel => ({
  description: { id: "m", architecture: "LlamaForCausalLM", maxContext, vocabSize: 128, dtype: "float32" },
  tokenizer: {
    vocabSize: 128,
    encode: (text, { addSpecialTokens }) => [
      ...(addSpecialTokens ? [1] : []),
      ...[...text].map((c) => c.charCodeAt(0)),
    ],
    decode: (ids) => String.fromCharCode(...ids),
  },
  chatTemplate,
  generate: async function* () {},
});

function generate(chat: Chat, served = model(template)) {
  const message = create(GenerateRequestSchema, {
    prompt: { case: "chat", value: { messages: [{ role: "user", content: "hi" }], ...chat } },
  });
  const request = toEngineRequest(message, served, "r");
  return request.error ?? String.fromCharCode(...request.value.promptIds);
}

describe("a chat prompt sent to a worker", () => {
  it("is rendered with the model's template and tokenized without adding special tokens", () => {
    assert.equal(generate({}), "bu:hi;a:");
    assert.equal(generate({ addGenerationPrompt: false }), "bu:hi;");
  });

  it("passes chat_template_kwargs and continues the final message", () => {
    assert.equal(generate({ chatTemplateKwargs: { short: true } }), "bu:hi;a:!");
    const messages = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "yo" },
    ];
    assert.equal(generate({ messages, continueFinalMessage: true }), "bu:hi;a:yo");
  });

  it("answers INVALID_ARGUMENT naming the field", () => {
    const error = (chat: Chat, served?: ServedModel) => (generate(chat, served) as Error).message;
    assert.equal(error({}, model(undefined)), 'messages: model "m" has no chat template');
    assert.equal(error({ messages: [] }), "messages: must not be empty");
    assert.equal(
      error({ continueFinalMessage: true, addGenerationPrompt: true }),
      "continue_final_message: cannot be used with add_generation_prompt (set it to false)",
    );
    assert.equal(
      error({ chatTemplateKwargs: { enable_thinking: false } }),
      "chat_template_kwargs.enable_thinking: the model's chat template does not use it",
    );
    assert.match(
      error({ chatTemplate: "tool_use" }),
      /^chat_template: must name one of the model's chat templates \(default\)/,
    );
    assert.match(error({}, model(template, 8)), /^prompt: 8 tokens do not fit the model's context of 8/);
  });
});

import assert from "node:assert/strict";
import { Code } from "../kernel/errors.ts";
import { ChatTemplate } from "./chat-template.ts";

const chatml =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% if thinking is defined and not thinking %}{{ '<think></think>' }}{% endif %}{% endif %}";

const user = { role: "user", content: "Hi" };

describe("ChatTemplate.render", () => {
  const template = new ChatTemplate(chatml, { bos_token: "<s>" });

  it("renders messages and opens the assistant's turn unless told not to", () => {
    const rendered = template.render([{ role: "system", content: "Be brief." }, user]);
    assert.equal(
      rendered.value,
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    );
    assert.equal(
      template.render([user], { addGenerationPrompt: false }).value,
      "<|im_start|>user\nHi<|im_end|>\n",
    );
  });

  it("continues the final message: no end of turn, no generation prompt", () => {
    const messages = [user, { role: "assistant", content: "Hello, " }];
    const rendered = template.render(messages, { continueFinalMessage: true });
    assert.equal(rendered.value, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello, ");
    assert.equal(
      template.render(messages, { continueFinalMessage: true, addGenerationPrompt: true }).error?.message,
      "continue_final_message: cannot be used with add_generation_prompt (set it to false)",
    );
  });

  it("passes chat_template_kwargs to the template, and refuses a key it never reads", () => {
    assert.match(template.render([user], { kwargs: { thinking: false } }).value ?? "", /<think><\/think>$/);
    assert.equal(
      template.render([user], { kwargs: { enable_thinking: false } }).error?.message,
      "chat_template_kwargs.enable_thinking: the model's chat template does not use it",
    );
    assert.equal(
      template.render([user], { kwargs: { add_generation_prompt: false } }).error?.message,
      "chat_template_kwargs.add_generation_prompt: is set by the request itself",
    );
  });

  it("lets kwargs override a special token, as transformers does", () => {
    const bos = new ChatTemplate("{{ bos_token }}{{ messages[0].content }}", { bos_token: "<s>" });
    assert.equal(bos.render([user]).value, "<s>Hi");
    assert.equal(bos.render([user], { kwargs: { bos_token: "" } }).value, "Hi");
  });

  it("turns raise_exception and bad messages into INVALID_ARGUMENT naming the field", () => {
    const strict = new ChatTemplate(
      "{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}ok",
    );
    const refused = strict.render([{ role: "assistant", content: "x" }]).error;
    assert.equal(refused?.code, Code.INVALID_ARGUMENT);
    assert.match(refused?.message ?? "", /^messages: .*first must be user/);
    assert.equal(strict.render([]).error?.message, "messages: must not be empty");
    assert.equal(
      strict.render([user, { role: "", content: "x" }]).error?.message,
      "messages[1].role: must not be empty",
    );
  });

  it("refuses a template sent as chat_template, and says when the model's own does not parse", () => {
    assert.match(
      template.render([user], { template: chatml }).error?.message ?? "",
      /^chat_template: must name one/,
    );
    const broken = new ChatTemplate("{% for %}", {}, "chat_template.jinja");
    const error = broken.render([user]).error;
    assert.equal(error?.code, Code.FAILED_PRECONDITION);
    assert.match(error?.message ?? "", /^chat_template\.jinja does not parse/);
  });
});

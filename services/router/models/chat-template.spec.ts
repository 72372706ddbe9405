import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ChatTemplate } from "./chat-template.ts";

const chatml =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

describe("ChatTemplate", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-chat-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("renders messages and opens the assistant's turn", () => {
    const rendered = new ChatTemplate(chatml).render([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ]);
    assert.equal(
      rendered.value,
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    );
  });

  it("reads the template and special tokens from tokenizer_config.json, a named list too", () => {
    writeFileSync(
      path.join(dir, "tokenizer_config.json"),
      JSON.stringify({
        bos_token: { content: "<s>" },
        chat_template: [{ name: "default", template: "{{ bos_token }}{{ messages[0].content }}" }],
      }),
    );
    assert.equal(ChatTemplate.fromModelDir(dir)?.render([{ role: "user", content: "x" }]).value, "<s>x");
    writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify({ bos_token: "<s>" }));
    assert.equal(ChatTemplate.fromModelDir(dir), undefined);
  });

  it("turns raise_exception into INVALID_ARGUMENT", () => {
    const strict = new ChatTemplate(
      "{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}ok",
    );
    assert.match(
      strict.render([{ role: "assistant", content: "x" }]).error?.message ?? "",
      /^messages: .*first must be user/,
    );
  });
});

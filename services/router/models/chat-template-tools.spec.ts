import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chatPromptIds } from "../../inference/chat-prompt.ts";
import { parseChatRequest } from "../http/openai-request.ts";
import { RouterModel } from "./router-model.ts";

// What transformers 5.18 renders and tokenizes for conversations with tools, tool calls and tool
// results (devtools/reference/chat_tools.py): Qwen 3's own template, and Llama 3.1 JSON and Mistral
// templates written from those families' published formats. The conversations go in as an OpenAI
// client sends them, through the router's request parsing, as a real request does.
interface ToolsCase {
  name: string;
  messages: unknown[];
  text: string;
  ids: number[];
}
interface ToolsFamily {
  source: string;
  template: string;
  cases: ToolsCase[];
}

const root = path.resolve(import.meta.dirname, "../../..");
const reference = JSON.parse(
  readFileSync(path.join(root, "devtools/reference/expected/chat-tools.json"), "utf8"),
) as { tools: unknown[]; families: Record<string, ToolsFamily> };

describe("chat templates with tools, against transformers 5.18", function () {
  // Loading Llama 3's and Qwen 3's 128k-150k vocabularies takes seconds on a loaded machine.
  this.timeout(120_000);
  let parent: string;
  before(() => {
    parent = mkdtempSync(path.join(os.tmpdir(), "tessera-chat-tools-"));
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  /** A checkpoint folder with the family's tokenizer files and its template in chat_template.jinja. */
  function model(name: string, family: ToolsFamily): RouterModel {
    const dir = mkdtempSync(path.join(parent, `${name}-`));
    const source = path.join(root, family.source);
    copyFileSync(path.join(source, "tokenizer.json"), path.join(dir, "tokenizer.json"));
    const config = JSON.parse(readFileSync(path.join(source, "tokenizer_config.json"), "utf8"));
    delete config.chat_template;
    writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify(config));
    writeFileSync(path.join(dir, "chat_template.jinja"), family.template);
    return RouterModel.load({ id: name, tokenizer: dir });
  }

  for (const [name, family] of Object.entries(reference.families)) {
    it(`${name}: renders tools, assistant tool_calls and tool results as transformers does, with its token ids`, () => {
      const served = model(name, family);
      for (const c of family.cases) {
        const request = parseChatRequest({ messages: c.messages, tools: reference.tools });
        assert.ok(request.value, request.error?.message);
        const prompt = request.value.prompt;
        assert.equal(prompt.type, "chat");
        if (prompt.type !== "chat") return;
        const rendered = served.chatTemplate?.render(prompt.messages, prompt.options);
        assert.equal(rendered?.value, c.text, c.name);
        const ids = chatPromptIds(
          { messages: prompt.messages, options: prompt.options ?? {} },
          served.chatTemplate,
          served.tokenizer,
          name,
        );
        assert.deepEqual(ids.value, c.ids, c.name);
      }
    });
  }

  it("renders no tools when the request has none (the template's own branch)", () => {
    const family = reference.families["qwen3"] as ToolsFamily;
    const served = model("qwen3-plain", family);
    const request = parseChatRequest({ messages: [{ role: "user", content: "Hi" }] });
    const prompt = request.value?.prompt;
    assert.ok(prompt?.type === "chat");
    const text = served.chatTemplate?.render(prompt.messages, prompt.options).value ?? "";
    assert.equal(text, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  });
});

// A router model for unit tests: the reference tiny-llama tokenizer, with what a worker would report.
import path from "node:path";
import { Tokenizer } from "../../tokenizer/tokenizer.ts";
import { ChatTemplate } from "../models/chat-template.ts";
import { RouterModel, type WorkerModelInfo } from "../models/router-model.ts";

const tokenizer = Tokenizer.fromFile(
  path.resolve(import.meta.dirname, "../../worker/testdata/hf-reference/tiny-llama"),
);

export const workerInfo: WorkerModelInfo = {
  revision: "rev1",
  architecture: "LlamaForCausalLM",
  dtype: "float32",
  maxContext: 64,
  vocabSize: tokenizer.vocabSize,
  blockSize: 16,
  eosTokenIds: [2],
};

export function testModel(
  options: { id?: string; maxTokens?: number; chat?: boolean; reported?: boolean } = {},
): RouterModel {
  const chat = options.chat
    ? new ChatTemplate("{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}[assistant] ")
    : undefined;
  const model = new RouterModel(
    { id: options.id ?? "tiny", tokenizer: "", maxTokens: options.maxTokens },
    tokenizer,
    chat,
  );
  if (options.reported !== false) model.info = workerInfo;
  return model;
}

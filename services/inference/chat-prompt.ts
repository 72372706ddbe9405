// A conversation as a prompt, the same at every front door (the router's OpenAI and gRPC doors, a
// worker's gRPC door): rendered with the model's chat template, then tokenized WITHOUT the tokenizer's
// special tokens, as transformers' apply_chat_template(tokenize=True) does — the template already wrote
// the ones the model wants, and adding them again would give Llama and Gemma a second bos.
import type { ChatPrompt as ChatPromptMessage } from "../../proto/gen/tessera/v1/inference_pb.js";
import { type Result, TesseraError } from "../kernel/errors.ts";
import type { ChatMessage, ChatOptions, ChatTemplate } from "./chat-template.ts";
import type { ServedTokenizer } from "./served-model.ts";

export interface ChatPrompt {
  messages: ChatMessage[];
  options: ChatOptions;
}

/** The prompt's token ids for a model with `template` (undefined: the model has none). */
export function chatPromptIds(
  prompt: ChatPrompt,
  template: ChatTemplate | undefined,
  tokenizer: Pick<ServedTokenizer, "encode">,
  modelId: string,
): Result<number[]> {
  if (template === undefined)
    return { error: TesseraError.invalidArgument("messages", `model "${modelId}" has no chat template`) };
  const text = template.render(prompt.messages, prompt.options);
  if (text.error) return text;
  return { value: tokenizer.encode(text.value, { addSpecialTokens: false }) };
}

/** A tessera.v1.ChatPrompt as a ChatPrompt (proto3: an empty chat_template means the default). */
export function chatPromptFromMessage(message: ChatPromptMessage): ChatPrompt {
  return {
    messages: message.messages.map(({ role, content }) => ({ role, content })),
    options: {
      addGenerationPrompt: message.addGenerationPrompt,
      continueFinalMessage: message.continueFinalMessage,
      kwargs: message.chatTemplateKwargs,
      template: message.chatTemplate === "" ? undefined : message.chatTemplate,
    },
  };
}

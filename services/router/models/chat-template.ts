// The chat template of a model (tokenizer_config.json `chat_template`, a Jinja template, or a list of
// named templates of which "default" is used), rendered with the maintained @huggingface/jinja, as
// transformers' apply_chat_template does: messages, add_generation_prompt and the special tokens.
import { readFileSync } from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";

export interface ChatMessage {
  role: string;
  content: string;
}

export class ChatTemplate {
  readonly #template: Template;
  readonly #specialTokens: Record<string, string>;

  constructor(source: string, specialTokens: Record<string, string> = {}) {
    this.#template = new Template(source);
    this.#specialTokens = specialTokens;
  }

  /** The template in `dir`/tokenizer_config.json; undefined when the model has none. */
  static fromModelDir(dir: string): ChatTemplate | undefined {
    let config: Record<string, unknown>;
    try {
      config = JSON.parse(readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")) as Record<
        string,
        unknown
      >;
    } catch {
      return undefined;
    }
    const source = templateSource(config["chat_template"]);
    if (source === undefined) return undefined;
    const specialTokens: Record<string, string> = {};
    for (const name of ["bos_token", "eos_token", "pad_token", "unk_token"]) {
      const token = config[name];
      const content =
        typeof token === "object" && token !== null ? (token as { content?: unknown }).content : token;
      if (typeof content === "string") specialTokens[name] = content;
    }
    return new ChatTemplate(source, specialTokens);
  }

  /** The prompt text for `messages`, ending with the assistant's turn opened. */
  render(messages: readonly ChatMessage[]): Result<string> {
    try {
      return {
        value: this.#template.render({ ...this.#specialTokens, messages, add_generation_prompt: true }),
      };
    } catch (err) {
      return {
        error: new TesseraError(
          Code.INVALID_ARGUMENT,
          `messages: the chat template refused them: ${(err as Error).message}`,
        ),
      };
    }
  }
}

function templateSource(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return undefined;
  const named = value as { name?: unknown; template?: unknown }[];
  const chosen = named.find((t) => t.name === "default") ?? named[0];
  return typeof chosen?.template === "string" ? chosen.template : undefined;
}

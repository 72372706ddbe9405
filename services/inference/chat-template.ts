// A model's chat templates, rendered as transformers' `apply_chat_template(messages, tokenize=False,
// add_generation_prompt=..., continue_final_message=..., **chat_template_kwargs)` does, with the
// maintained @huggingface/jinja (Hugging Face's own Jinja for chat templates, as transformers.js uses):
// the template sees the messages (with an assistant's tool_calls, their arguments as objects, and a tool
// message's tool_call_id, as vLLM hands them over), add_generation_prompt, tools (the request's, in
// OpenAI's form, else none) and documents (none), the tokenizer's
// named special tokens (bos_token...) and the request's kwargs, which override those tokens. A model may
// carry several named templates (transformers' `additional_chat_templates/`, or a list in
// tokenizer_config.json): "default" is used unless the request names another of the model's own;
// a template sent with a request is never run (vLLM refuses those too unless the server trusts them).
// Where the templates come from: chat-template-files.ts.
import { Template } from "@huggingface/jinja";
import { Code, type Result, TesseraError } from "../kernel/errors.ts";
import { readChatTemplates } from "./chat-template-files.ts";
import { templateVariables } from "./template-variables.ts";

export interface ChatMessage {
  role: string;
  content: string;
  /** An assistant's calls; the arguments are objects, as templates write them with `| tojson`. */
  tool_calls?: readonly ChatToolCall[];
  /** A tool message: the call it answers. */
  tool_call_id?: string;
  name?: string;
}

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: unknown };
}

export interface ChatOptions {
  /** Open the assistant's turn after the messages. Unset: true, unless continueFinalMessage. */
  addGenerationPrompt?: boolean | undefined;
  /** Leave the final message open for the model to continue (a prefilled answer). */
  continueFinalMessage?: boolean | undefined;
  /** Extra template variables (chat_template_kwargs), e.g. `{ enable_thinking: false }` for Qwen 3. */
  kwargs?: Readonly<Record<string, unknown>> | undefined;
  /** One of the model's own templates, by name (unset: "default"). */
  template?: string | undefined;
  /** The tools the model may call, as OpenAI's request lists them (`{type: "function", function}`). */
  tools?: readonly unknown[] | undefined;
}

/** Variables apply_chat_template sets itself: a request sets them with their own fields. */
const RESERVED = new Set([
  "messages",
  "add_generation_prompt",
  "continue_final_message",
  "tools",
  "documents",
  "chat_template",
  "tokenize",
]);

/** transformers marks the final message with this, renders, and cuts the prompt where it lands. */
const CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG ";

interface Compiled {
  source: string;
  template: Template;
  /** Every name the template reads (an over-approximation: attribute names count too). */
  variables: ReadonlySet<string>;
}

export class ChatTemplate {
  /** Template name -> Jinja source. */
  readonly #sources: ReadonlyMap<string, string>;
  readonly #specialTokens: Readonly<Record<string, string>>;
  /** Where the templates came from, for errors about them. */
  readonly #origin: string;
  readonly #compiled = new Map<string, Result<Compiled>>();

  constructor(
    templates: string | Readonly<Record<string, string>>,
    specialTokens: Readonly<Record<string, string>> = {},
    origin = "the chat template",
  ) {
    this.#sources = new Map(
      Object.entries(typeof templates === "string" ? { default: templates } : templates),
    );
    this.#specialTokens = specialTokens;
    this.#origin = origin;
  }

  /**
   * The templates of the checkpoint folder `dir`, where transformers 5.18 looks for them (see
   * chat-template-files.ts); undefined when it has none. Throws TesseraError on a malformed file.
   */
  static fromModelDir(dir: string): ChatTemplate | undefined {
    const files = readChatTemplates(dir);
    return files && new ChatTemplate(files.templates, files.specialTokens, files.origin);
  }

  /** The Jinja source of the template a request names (unset: "default"); undefined if there is none. */
  source(name: string | undefined): string | undefined {
    return this.#sources.get(name ?? "default");
  }

  /** The names of the model's templates ("default" for a single one). */
  get names(): string[] {
    return [...this.#sources.keys()];
  }

  /** The prompt text for `messages`; INVALID_ARGUMENT naming the field for what the request got wrong. */
  render(messages: readonly ChatMessage[], options: ChatOptions = {}): Result<string> {
    if (messages.length === 0) return invalid("messages", "must not be empty");
    const unnamed = messages.findIndex((m) => m.role === "");
    if (unnamed >= 0) return invalid(`messages[${unnamed}].role`, "must not be empty");
    const continueFinal = options.continueFinalMessage === true;
    const addGenerationPrompt = options.addGenerationPrompt ?? !continueFinal;
    if (continueFinal && addGenerationPrompt)
      return invalid("continue_final_message", "cannot be used with add_generation_prompt (set it to false)");
    const compiled = this.#template(options.template);
    if (compiled.error) return compiled;
    const kwargs = options.kwargs ?? {};
    for (const key of Object.keys(kwargs)) {
      if (RESERVED.has(key)) return invalid(`chat_template_kwargs.${key}`, "is set by the request itself");
      if (!compiled.value.variables.has(key))
        return invalid(`chat_template_kwargs.${key}`, "the model's chat template does not use it");
    }
    const context = { ...this.#specialTokens, ...kwargs, tools: options.tools ?? null, documents: null };
    if (!continueFinal) return this.#render(compiled.value, messages, context, addGenerationPrompt);
    return this.#renderContinued(compiled.value, messages, context);
  }

  /**
   * As transformers: the final message's content gets a tag, and the prompt ends where the tag lands
   * (trailing spaces trimmed when the template trimmed the tag's), so the template's end of turn and
   * anything after it are cut off.
   */
  #renderContinued(
    compiled: Compiled,
    messages: readonly ChatMessage[],
    context: Record<string, unknown>,
  ): Result<string> {
    const final = messages[messages.length - 1] as ChatMessage;
    if (!compiled.source.includes("content"))
      return invalid("continue_final_message", "the model's chat template does not read message content");
    const tagged = [...messages.slice(0, -1), { ...final, content: final.content + CONTINUE_TAG }];
    const rendered = this.#render(compiled, tagged, context, false);
    if (rendered.error) return rendered;
    const text = rendered.value;
    const at = text.lastIndexOf(CONTINUE_TAG.trim());
    if (at < 0 || !text.includes(final.content.trim()))
      return invalid(
        "continue_final_message",
        "the model's chat template drops part of the final message, which cannot then be continued",
      );
    return { value: text.startsWith(CONTINUE_TAG, at) ? text.slice(0, at) : text.slice(0, at).trimEnd() };
  }

  #render(
    compiled: Compiled,
    messages: readonly ChatMessage[],
    context: Record<string, unknown>,
    addGenerationPrompt: boolean,
  ): Result<string> {
    try {
      return {
        value: compiled.template.render({ ...context, messages, add_generation_prompt: addGenerationPrompt }),
      };
    } catch (err) {
      return invalid("messages", `the chat template refused them: ${(err as Error).message}`);
    }
  }

  #template(name: string | undefined): Result<Compiled> {
    const chosen = name ?? "default";
    const source = this.#sources.get(chosen);
    if (source === undefined) {
      const names = this.names.join(", ");
      return name === undefined
        ? invalid(
            "chat_template",
            `the model has several chat templates and none is "default": name one of ${names}`,
          )
        : invalid("chat_template", `must name one of the model's chat templates (${names})`);
    }
    let compiled = this.#compiled.get(chosen);
    if (compiled === undefined) {
      compiled = compile(source, chosen === "default" ? this.#origin : `${this.#origin} "${chosen}"`);
      this.#compiled.set(chosen, compiled);
    }
    return compiled;
  }
}

function compile(source: string, origin: string): Result<Compiled> {
  try {
    const template = new Template(source);
    return { value: { source, template, variables: templateVariables(template.parsed) } };
  } catch (err) {
    const message = `${origin} does not parse: ${(err as Error).message}`;
    return { error: new TesseraError(Code.FAILED_PRECONDITION, message) };
  }
}

function invalid(field: string, message: string): { error: TesseraError } {
  return { error: TesseraError.invalidArgument(field, message) };
}

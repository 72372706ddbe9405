// A model's output as OpenAI's assistant message with tool_calls, whole or streamed. The stream
// re-parses the text so far on every delta and sends what grew since the last one, in OpenAI's delta
// form: a call's first delta carries its index, id, type and function name (arguments ""), the
// following ones chunks of its arguments; content before a call streams as content, except a tail that
// may be the start of a call's marker, which waits for the next delta. A call is sent only once its name
// is known, and calls in order. Where the output turns out not to be a call after all (a Llama reply that
// opened with "{" but is no call), the held-back text is sent as content at the end.
import { randomInt } from "node:crypto";
import type { ScanCache } from "./json-object-scan.ts";
import type { ParsedOutput, ToolCallParser } from "./tool-call-parser.ts";

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

export interface OutputDelta {
  content: string;
  toolCalls: ToolCallDelta[];
}

export interface ParsedMessage {
  /** null when the reply is only calls. */
  content: string | null;
  toolCalls: ToolCall[];
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** OpenAI's `call_` + 24 characters; Mistral's templates want exactly 9 letters and digits. */
export function toolCallId(style: ToolCallParser["idStyle"]): string {
  const random = (n: number) => Array.from({ length: n }, () => ALPHANUMERIC[randomInt(62)]).join("");
  return style === "mistral" ? random(9) : `call_${random(24)}`;
}

/** The whole output as a message; output that is not well-formed calls is all content. */
export function parseMessage(parser: ToolCallParser, text: string, parallel: boolean): ParsedMessage {
  const parsed = parser.parse(text, true);
  if (parsed.malformed || parsed.calls.length === 0) return { content: text, toolCalls: [] };
  const calls = parsed.calls.slice(0, parallel ? undefined : 1);
  return {
    content: parsed.content === "" ? null : parsed.content,
    toolCalls: calls.map((c) => ({
      id: toolCallId(parser.idStyle),
      type: "function",
      function: { name: c.name as string, arguments: c.arguments },
    })),
  };
}

interface SentCall {
  argumentsSent: number;
}

export class ToolCallStream {
  readonly #parser: ToolCallParser;
  readonly #parallel: boolean;
  #text = "";
  /** The parser's scans of the output so far, resumed as it grows. */
  readonly #cache: ScanCache = new Map();
  #contentSent = "";
  readonly #sent: SentCall[] = [];

  constructor(parser: ToolCallParser, parallel: boolean) {
    this.#parser = parser;
    this.#parallel = parallel;
  }

  /** Whether a call has been sent (the finish reason is then "tool_calls"). */
  get called(): boolean {
    return this.#sent.length > 0;
  }

  push(text: string): OutputDelta {
    this.#text += text;
    return this.#diff(this.#parser.parse(this.#text, false, this.#cache));
  }

  /** What is left to send once the output is whole. */
  finish(): OutputDelta {
    const parsed = this.#parser.parse(this.#text, true, this.#cache);
    if (parsed.malformed && this.#sent.length === 0 && this.#text.startsWith(this.#contentSent)) {
      const content = this.#text.slice(this.#contentSent.length);
      this.#contentSent = this.#text;
      return { content, toolCalls: [] };
    }
    return this.#diff(parsed);
  }

  #diff(parsed: ParsedOutput): OutputDelta {
    let content = "";
    if (parsed.content.length > this.#contentSent.length && parsed.content.startsWith(this.#contentSent)) {
      content = parsed.content.slice(this.#contentSent.length);
      this.#contentSent = parsed.content;
    }
    const toolCalls: ToolCallDelta[] = [];
    const calls = parsed.calls.slice(0, this.#parallel ? undefined : 1);
    for (const [index, call] of calls.entries()) {
      let sent = this.#sent[index];
      if (sent === undefined) {
        if (call.name === undefined) break;
        sent = { argumentsSent: 0 };
        this.#sent.push(sent);
        const id = toolCallId(this.#parser.idStyle);
        toolCalls.push({ index, id, type: "function", function: { name: call.name, arguments: "" } });
      }
      if (call.arguments.length > sent.argumentsSent) {
        const chunk = call.arguments.slice(sent.argumentsSent);
        const opened = toolCalls.at(-1);
        if (opened?.index === index) opened.function.arguments += chunk;
        else toolCalls.push({ index, function: { arguments: chunk } });
        sent.argumentsSent = call.arguments.length;
      }
    }
    return { content, toolCalls };
  }
}

/** `first` then `second` as one delta: one entry per call, its argument chunks joined. */
export function joinDeltas(first: OutputDelta, second: OutputDelta): OutputDelta {
  const toolCalls = first.toolCalls.map((d) => ({ ...d, function: { ...d.function } }));
  for (const d of second.toolCalls) {
    const same = toolCalls.find((c) => c.index === d.index);
    if (same === undefined) toolCalls.push(d);
    else same.function.arguments += d.function.arguments;
  }
  return { content: first.content + second.content, toolCalls };
}

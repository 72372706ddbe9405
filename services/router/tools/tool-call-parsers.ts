// Which parser reads a model's tool calls: the one its router config names (`toolCallParser`, as
// vLLM's --tool-call-parser), else the one its chat template shows: a template that writes calls
// between <tool_call> tags is Qwen's/Hermes' format, one that knows [TOOL_CALLS] is Mistral's, one that
// speaks of <|python_tag|> or the ipython role is Llama 3.1's JSON format. A request's tool_choice
// decides whether a parser runs at all (tool-call-plan.ts).
import { hermesParser } from "./hermes-parser.ts";
import { llama3JsonParser } from "./llama3-json-parser.ts";
import { mistralParser } from "./mistral-parser.ts";
import type { ToolCallParser } from "./tool-call-parser.ts";

export const TOOL_CALL_PARSERS = {
  hermes: hermesParser,
  llama3_json: llama3JsonParser,
  mistral: mistralParser,
} as const satisfies Record<string, ToolCallParser>;

export type ToolCallParserName = keyof typeof TOOL_CALL_PARSERS;

export const TOOL_CALL_PARSER_NAMES = Object.keys(TOOL_CALL_PARSERS) as [
  ToolCallParserName,
  ...ToolCallParserName[],
];

/** The parser a chat template's source shows; undefined when it shows none of the known formats. */
export function parserForTemplate(source: string): ToolCallParser | undefined {
  if (source.includes("[TOOL_CALLS]")) return mistralParser;
  if (source.includes("<tool_call>")) return hermesParser;
  if (source.includes("<|python_tag|>") || source.includes("ipython")) return llama3JsonParser;
  return undefined;
}

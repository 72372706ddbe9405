// How a chat request's output is read for tool calls: not at all (no tools, tool_choice "none" — the
// tools still reach the chat template, as vLLM does by default), as the JSON a forced tool_choice
// constrains it to (named function, "required"), or with the model's own parser (tool_choice "auto";
// refused with 400 when the model's template shows no known format and its config names none).
import { type Result, TesseraError } from "../../kernel/errors.ts";
import type { RouterModel } from "../models/router-model.ts";
import { namedCallParser, requiredCallsParser } from "../tools/forced-tool-calls.ts";
import type { ToolCallParser } from "../tools/tool-call-parser.ts";
import { parserForTemplate, TOOL_CALL_PARSER_NAMES, TOOL_CALL_PARSERS } from "../tools/tool-call-parsers.ts";
import type { ToolRequest } from "./openai-tools.ts";

export function toolCallPlan(
  tools: ToolRequest | undefined,
  model: Pick<RouterModel, "id" | "chatTemplate" | "toolCallParser">,
  template: string | undefined,
  skipSpecialTokens: boolean | undefined,
): Result<ToolCallParser | undefined> {
  if (tools === undefined || tools.choice === "none") return { value: undefined };
  const source = model.chatTemplate?.source(template);
  const family =
    model.toolCallParser !== undefined
      ? TOOL_CALL_PARSERS[model.toolCallParser]
      : source === undefined
        ? undefined
        : parserForTemplate(source);
  const idStyle = family?.idStyle ?? "openai";
  if (tools.choice === "required") return { value: requiredCallsParser(idStyle) };
  if (typeof tools.choice === "object") return { value: namedCallParser(tools.choice.name, idStyle) };
  if (family === undefined) {
    const names = TOOL_CALL_PARSER_NAMES.join(", ");
    const message =
      `model "${model.id}" has no tool-call parser: its chat template shows none of the known formats ` +
      `(${names}) and the router's model config names none (toolCallParser); ask for "required" or a named function`;
    return { error: TesseraError.invalidArgument("tool_choice", message) };
  }
  if (family.name === "mistral" && skipSpecialTokens === true) {
    const message =
      "must be false with tool_choice auto: the model marks its calls with the special token [TOOL_CALLS]";
    return { error: TesseraError.invalidArgument("skip_special_tokens", message) };
  }
  return { value: family };
}

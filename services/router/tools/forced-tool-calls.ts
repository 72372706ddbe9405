// The output of a request whose tool_choice forces a call, read as calls. Such a request's output is
// constrained to JSON (tool-choice-schema.ts builds the schema, as vLLM does), so it carries no
// family's markers: a named function's output is that call's arguments object; "required" gives a
// JSON array of `{"name": ..., "parameters": {...}}`, one per call.
import { type ScanCache, skipSpace } from "./json-object-scan.ts";
import { type ParsedOutput, readCallArray, type ToolCallParser } from "./tool-call-parser.ts";

/** tool_choice {"type": "function", "function": {"name": name}}: the whole output is the arguments. */
export function namedCallParser(name: string, idStyle: ToolCallParser["idStyle"]): ToolCallParser {
  return {
    name: "named",
    idStyle,
    parse(text: string, final: boolean): ParsedOutput {
      const args = text.slice(skipSpace(text, 0));
      const complete = final && isObject(args);
      return { content: "", calls: [{ name, arguments: args, complete }], malformed: final && !complete };
    },
  };
}

/** tool_choice "required": a JSON array of calls, each `{"name": ..., "parameters": {...}}`. */
export function requiredCallsParser(idStyle: ToolCallParser["idStyle"]): ToolCallParser {
  return {
    name: "required",
    idStyle,
    parse(text: string, final: boolean, cache?: ScanCache): ParsedOutput {
      const read = readCallArray(text, 0, final, cache);
      return {
        content: "",
        calls: read.calls,
        malformed: read.malformed || (final && read.calls.length === 0),
      };
    },
  };
}

function isObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

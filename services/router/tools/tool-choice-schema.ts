// The JSON Schema that enforces a forced tool_choice with structured output, as vLLM builds it: a named
// function's output is its arguments (the function's parameters schema); "required" is a JSON array of
// calls, each `{"name": <one of the tools>, "parameters": <that tool's schema>}` (at most one when
// parallel_tool_calls is false). The sampler masks every token that would leave the schema, so even a
// model that never learnt the family's tool-call format answers with calls that parse.
import type { StructuredOutput } from "../../inference/types.ts";

export interface FunctionTool {
  name: string;
  description?: string;
  /** The arguments' JSON Schema; unset: no arguments (`{}`). */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = "none" | "auto" | "required" | { name: string };

const NO_PARAMETERS = { type: "object", properties: {} };

/** The constraint a forced choice sets, and the field a schema that does not compile is named by. */
export interface ForcedToolSchema {
  structured: StructuredOutput;
  field: string;
}

export function forcedToolSchema(
  choice: ToolChoice,
  tools: readonly FunctionTool[],
  parallel: boolean,
): ForcedToolSchema | undefined {
  if (choice === "none" || choice === "auto") return undefined;
  if (choice !== "required") {
    const index = tools.findIndex((t) => t.name === choice.name);
    const tool = tools[index];
    const schema = tool?.parameters ?? NO_PARAMETERS;
    return {
      structured: { kind: "json_schema", schema, strict: tool?.strict === true },
      field: `tools.${index}.function.parameters`,
    };
  }
  const call = (tool: FunctionTool) => ({
    type: "object",
    properties: { name: { type: "string", enum: [tool.name] }, parameters: tool.parameters ?? NO_PARAMETERS },
    required: ["name", "parameters"],
    additionalProperties: false,
  });
  const schema = {
    type: "array",
    minItems: 1,
    ...(!parallel && { maxItems: 1 }),
    items: { anyOf: tools.map(call) },
  };
  return {
    structured: { kind: "json_schema", schema, strict: tools.every((t) => t.strict === true) },
    field: "tools",
  };
}

// OpenAI's tool fields of a chat request: `tools` (function tools: name, description, parameters as a
// JSON Schema, strict), `tool_choice` (none, auto, required, or one named function) and
// `parallel_tool_calls`, and the tool side of messages (an assistant's `tool_calls`, a `tool` message's
// `tool_call_id`). Malformed ones are refused with 400 naming the field. An assistant's call arguments
// arrive as a JSON string and are handed to the chat template parsed, as vLLM does, because the
// templates write them with `| tojson`.
import { z } from "zod";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import type { FunctionTool, ToolChoice } from "../tools/tool-choice-schema.ts";

const nullable = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

export const toolSchema = z.strictObject({
  type: z.literal("function", "only function tools are supported"),
  function: z.strictObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes"),
    description: nullable(z.string()),
    parameters: nullable(z.record(z.string(), z.unknown(), "must be a JSON Schema object")),
    strict: nullable(z.boolean()),
  }),
});

export const toolChoiceSchema = z.union(
  [
    z.enum(["none", "auto", "required"]),
    z.strictObject({ type: z.literal("function"), function: z.strictObject({ name: z.string() }) }),
  ],
  { error: 'must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}' },
);

export const toolCallSchema = z.looseObject({
  id: z.string().min(1),
  type: z.literal("function", "only function calls are supported"),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

export interface ToolRequest {
  tools: FunctionTool[];
  choice: ToolChoice;
  parallel: boolean;
}

type ToolFields = {
  tools?: z.infer<typeof toolSchema>[] | undefined;
  tool_choice?: z.infer<typeof toolChoiceSchema> | undefined;
  parallel_tool_calls?: boolean | undefined;
};

/** The request's tools and choice; undefined without tools (tool_choice "none" or unset). */
export function toolRequest(body: ToolFields): Result<ToolRequest | undefined> {
  const choice = body.tool_choice;
  if (body.tools === undefined) {
    if (choice === undefined || choice === "none") return { value: undefined };
    return invalid("tool_choice", "needs tools");
  }
  if (body.tools.length === 0) return invalid("tools", "must not be empty (leave it out for no tools)");
  const tools: FunctionTool[] = [];
  for (const [i, { function: f }] of body.tools.entries()) {
    if (tools.some((t) => t.name === f.name))
      return invalid(`tools.${i}.function.name`, `"${f.name}" is defined twice`);
    tools.push({
      name: f.name,
      ...(f.description !== undefined && { description: f.description }),
      ...(f.parameters !== undefined && { parameters: f.parameters }),
      ...(f.strict !== undefined && { strict: f.strict }),
    });
  }
  const named = typeof choice === "object" ? choice.function.name : undefined;
  if (named !== undefined && !tools.some((t) => t.name === named))
    return invalid("tool_choice.function.name", `no tool named "${named}" in tools`);
  return {
    value: {
      tools,
      choice: named !== undefined ? { name: named } : ((choice as ToolChoice | undefined) ?? "auto"),
      parallel: body.parallel_tool_calls !== false,
    },
  };
}

/** The tools as a chat template reads them: OpenAI's `{"type": "function", "function": {...}}`. */
export function templateTools(request: ToolRequest): unknown[] {
  return request.tools.map((f) => ({ type: "function", function: f }));
}

/** An assistant's tool calls for the template, their arguments parsed (INVALID_ARGUMENT naming one that is not a JSON object). */
export function templateToolCalls(
  calls: readonly z.infer<typeof toolCallSchema>[],
  field: string,
): Result<{ id: string; type: "function"; function: { name: string; arguments: unknown } }[]> {
  const parsed = [];
  for (const [j, call] of calls.entries()) {
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments);
    } catch {
      args = undefined;
    }
    if (typeof args !== "object" || args === null || Array.isArray(args))
      return invalid(`${field}.${j}.function.arguments`, "must be a JSON object, as a string");
    parsed.push({
      id: call.id,
      type: "function" as const,
      function: { name: call.function.name, arguments: args },
    });
  }
  return { value: parsed };
}

function invalid(field: string, message: string): { error: TesseraError } {
  return { error: TesseraError.invalidArgument(field, message) };
}

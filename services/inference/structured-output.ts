// A request's structured output (SamplingParams.structured) between its two shapes: the proto message
// (tessera.v1.StructuredOutput, on every gRPC hop: client -> router -> worker) and the engine's
// StructuredOutput. Checks here are of shape only (a choice list that is not empty, a schema that is
// JSON); whether a schema, regex or grammar compiles is the grammar engine's question
// (services/worker/structured/), asked by the router before routing and by the worker before serving.
import { create } from "@bufbuild/protobuf";
import {
  ChoicesSchema,
  JsonObjectSchema,
  JsonSchemaSchema,
  type StructuredOutput as StructuredOutputMessage,
  StructuredOutputSchema,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import { type Result, TesseraError } from "../kernel/errors.ts";
import type { StructuredOutput } from "./types.ts";

/** Most alternatives of a choice constraint (each becomes a branch of the grammar). */
export const MAX_CHOICES = 1024;

/** The engine's constraint and how many trailing prompt tokens already matched it, from the message. */
export function structuredFromMessage(
  message: StructuredOutputMessage | undefined,
): Result<{ structured: StructuredOutput; matchedTokens: number } | undefined> {
  if (message === undefined) return { value: undefined };
  const kind = message.kind;
  let structured: StructuredOutput;
  switch (kind.case) {
    case undefined:
      return invalid("structured", "set json_object, json_schema, regex, choice or grammar");
    case "jsonObject":
      structured = { kind: "json_object" };
      break;
    case "jsonSchema": {
      let schema: unknown;
      try {
        schema = JSON.parse(kind.value.schemaJson);
      } catch {
        return invalid("structured.json_schema.schema_json", "is not JSON");
      }
      structured = { kind: "json_schema", schema, strict: kind.value.strict };
      break;
    }
    case "regex":
      structured = { kind: "regex", pattern: kind.value };
      break;
    case "choice":
      structured = { kind: "choice", choices: [...kind.value.choices] };
      break;
    case "grammar":
      structured = { kind: "grammar", grammar: kind.value };
      break;
    default:
      return assertNever(kind);
  }
  const checked = checkStructured(structured, "structured");
  if (checked.error) return checked;
  return { value: { structured, matchedTokens: message.matchedTokens } };
}

export function structuredToMessage(s: StructuredOutput, matchedTokens = 0): StructuredOutputMessage {
  return create(StructuredOutputSchema, { kind: kindMessage(s), matchedTokens });
}

function kindMessage(s: StructuredOutput): StructuredOutputMessage["kind"] {
  switch (s.kind) {
    case "json_object":
      return { case: "jsonObject", value: create(JsonObjectSchema) };
    case "json_schema":
      return {
        case: "jsonSchema",
        value: create(JsonSchemaSchema, { schemaJson: JSON.stringify(s.schema), strict: s.strict }),
      };
    case "regex":
      return { case: "regex", value: s.pattern };
    case "choice":
      return { case: "choice", value: create(ChoicesSchema, { choices: s.choices }) };
    case "grammar":
      return { case: "grammar", value: s.grammar };
    default:
      return assertNever(s);
  }
}

/** Shape checks of a constraint; `field` names it in the error (`guided_choice`, `structured`...). */
export function checkStructured(s: StructuredOutput, field: string): Result<StructuredOutput> {
  switch (s.kind) {
    case "json_object":
      return { value: s };
    case "json_schema":
      if (typeof s.schema !== "boolean" && (typeof s.schema !== "object" || s.schema === null))
        return invalid(field, "the schema must be a JSON object");
      return { value: s };
    case "regex":
      if (s.pattern.length === 0) return invalid(field, "the regex must not be empty");
      return { value: s };
    case "choice":
      if (s.choices.length === 0) return invalid(field, "needs at least one choice");
      if (s.choices.length > MAX_CHOICES) return invalid(field, `at most ${MAX_CHOICES} choices`);
      if (s.choices.some((c) => c.length === 0)) return invalid(field, "a choice must not be empty");
      return { value: s };
    case "grammar":
      if (s.grammar.trim().length === 0) return invalid(field, "the grammar must not be empty");
      return { value: s };
    default:
      return assertNever(s);
  }
}

function invalid(field: string, message: string): { error: TesseraError } {
  return { error: TesseraError.invalidArgument(field, message) };
}

function assertNever(value: never): never {
  throw new Error(`unexpected structured output ${JSON.stringify(value)}`);
}

// What xgrammar compiles for each kind of structured output, and a check of it that needs no tokenizer
// (the router's, before a request is routed; the worker compiles against its vocabulary).
//
// JSON comes out compact, on one line, with Python's separators (", " and ": "): any whitespace between
// tokens is valid JSON too, but a model left free to add it can spend every remaining token on spaces
// and newlines (vLLM added disable-any-whitespace for the same reason). json_object is a schema of one
// object of any properties; json_schema's `strict` is xgrammar's strict mode: properties and items the
// schema does not list are not generated unless it allows them (OpenAI's strict outputs likewise carry
// no extra properties).
import type { StructuredOutput } from "../types.ts";
import { choicesToEbnf, regexToEbnf } from "./regex-ebnf.ts";
import { explained, xgrammarReady } from "./xgrammar.ts";

export type GrammarSource =
  | { type: "json_schema"; schema: string; strict: boolean }
  | { type: "ebnf"; ebnf: string };

/** JSON on one line with ", " and ": " (xgrammar's anyWhitespace off, indent -1). */
export const JSON_LAYOUT = { anyWhitespace: false, indent: -1, separators: [", ", ": "] as [string, string] };

/** The grammar of a constraint; an error message when it cannot be one (a regex we cannot translate). */
export function grammarSource(s: StructuredOutput): { value: GrammarSource } | { error: string } {
  switch (s.kind) {
    case "json_object":
      return { value: { type: "json_schema", schema: '{"type":"object"}', strict: false } };
    case "json_schema":
      return { value: { type: "json_schema", schema: JSON.stringify(s.schema), strict: s.strict } };
    case "regex": {
      const ebnf = regexToEbnf(s.pattern);
      if (ebnf.error !== undefined) return { error: `regex: ${ebnf.error}` };
      return { value: { type: "ebnf", ebnf: ebnf.value } };
    }
    case "choice":
      return { value: { type: "ebnf", ebnf: choicesToEbnf(s.choices) } };
    case "grammar":
      return { value: { type: "ebnf", ebnf: s.grammar } };
    default:
      return assertNever(s);
  }
}

/** The cache key of a grammar source: equal keys compile to the same grammar. */
export function grammarKey(source: GrammarSource): string {
  return source.type === "ebnf"
    ? `ebnf\u0000${source.ebnf}`
    : `json\u0000${source.strict}\u0000${source.schema}`;
}

/** Verdicts of grammarProblem by grammar key (an application sends the same few schemas again and again). */
const checked = new Map<string, string | undefined>();
const MAX_CHECKED = 256;

/** Why the constraint is not a grammar xgrammar accepts (its own message), or undefined when it is. */
export async function grammarProblem(s: StructuredOutput): Promise<string | undefined> {
  const source = grammarSource(s);
  if ("error" in source) return source.error;
  const key = grammarKey(source.value);
  if (checked.has(key)) return checked.get(key);
  const problem = await buildProblem(source.value);
  checked.set(key, problem);
  if (checked.size > MAX_CHECKED) checked.delete(checked.keys().next().value!);
  return problem;
}

async function buildProblem(src: GrammarSource): Promise<string | undefined> {
  const xg = await xgrammarReady();
  const { anyWhitespace, indent, separators } = JSON_LAYOUT;
  const built = await explained(() =>
    src.type === "ebnf"
      ? xg.Grammar.fromEBNF(src.ebnf)
      : xg.Grammar.fromJSONSchema(src.schema, anyWhitespace, indent, separators, src.strict),
  );
  if ("error" in built) return built.error;
  built.value.dispose();
  return undefined;
}

function assertNever(value: never): never {
  throw new Error(`unexpected structured output ${JSON.stringify(value)}`);
}

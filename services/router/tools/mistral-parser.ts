// Mistral's tool calls (vLLM's "mistral" parser): the special token [TOOL_CALLS], then either a JSON
// array of `{"name": ..., "arguments": {...}}` objects (tokenizer versions up to v7: Mistral 7B v0.3,
// Nemo, Small 3.1) or, from tokenizer v11 on (Small 3.2, Magistral, Devstral), `name[ARGS]{...}`, a
// marker before each call. Text before the first marker is content. Mistral's templates check that a
// call's id is 9 letters and digits when it is fed back, so this parser's calls get such ids.
import { type ScanCache, scanCallObject, skipSpace } from "./json-object-scan.ts";
import {
  markerPrefixLength,
  type ParsedOutput,
  type PartialToolCall,
  readCallArray,
  type ToolCallParser,
} from "./tool-call-parser.ts";

const MARKER = "[TOOL_CALLS]";
const ARGS = "[ARGS]";
const NAME = /^[a-zA-Z0-9_.-]+$/;

export const mistralParser: ToolCallParser = {
  name: "mistral",
  idStyle: "mistral",
  parse(text: string, final: boolean, cache?: ScanCache): ParsedOutput {
    const at = text.indexOf(MARKER);
    if (at < 0) {
      const held = final ? 0 : markerPrefixLength(text, MARKER);
      return { content: text.slice(0, text.length - held), calls: [], malformed: false };
    }
    const content = text.slice(0, at);
    const body = skipSpace(text, at + MARKER.length);
    if (text[body] === "[" || text[body] === "{")
      return { content, ...readCallArray(text, body, final, cache) };
    return { content, ...readNamedCalls(text, at, final, cache) };
  },
};

/** `[TOOL_CALLS]name[ARGS]{...}`, repeated, from the marker at `at` on. */
function readNamedCalls(
  text: string,
  at: number,
  final: boolean,
  cache: ScanCache | undefined,
): Omit<ParsedOutput, "content"> {
  const calls: PartialToolCall[] = [];
  let i = at;
  while (text.startsWith(MARKER, i)) {
    const nameStart = i + MARKER.length;
    const argsAt = text.indexOf(ARGS, nameStart);
    if (argsAt < 0) {
      const partial = text.slice(nameStart);
      const open = NAME.test(partial.slice(0, partial.length - markerPrefixLength(partial, ARGS)) || "x");
      return { calls, malformed: final || !open };
    }
    const name = text.slice(nameStart, argsAt).trim();
    if (!NAME.test(name)) return { calls, malformed: true };
    const open = skipSpace(text, argsAt + ARGS.length);
    if (open >= text.length) {
      calls.push({ name, arguments: "", complete: false });
      return { calls, malformed: final };
    }
    if (text[open] !== "{") return { calls, malformed: true };
    const end = scanCallObject(text, open, cache).end;
    const args = text.slice(open, end ?? text.length);
    const complete = end !== undefined && parses(args);
    calls.push({ name, arguments: args, complete });
    if (end === undefined) return { calls, malformed: final };
    if (!complete) return { calls, malformed: true };
    i = skipSpace(text, end);
    if (i >= text.length || (!final && MARKER.startsWith(text.slice(i)))) return { calls, malformed: false };
    if (!text.startsWith(MARKER, i)) return { calls, malformed: true };
  }
  return { calls, malformed: final };
}

function parses(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

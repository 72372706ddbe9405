// What a tool-call parser makes of a model's output, the whole of it or as far as it has been written.
// Each family writes its calls its own way (tool-call-formats.ts); the parsers all answer in this one
// shape, so the non-streamed answer and the stream (tool-call-stream.ts) are built the same way: the
// stream re-parses the text so far on every delta and sends what grew since the last one. A parser
// is monotone by construction: the content and each call's arguments it returns for a longer text
// start with what it returned for a shorter one (the held-back tail of a possible marker aside).
import { type ScanCache, type ScannedCall, scanCallObject, skipSpace } from "./json-object-scan.ts";

export interface PartialToolCall {
  /** Undefined until the name's string is closed. */
  name: string | undefined;
  /** The arguments' JSON text so far ("" until they start). */
  arguments: string;
  /** The call's object is closed and parses as JSON. */
  complete: boolean;
}

export interface ParsedOutput {
  /** Text for the client (`content`), without the tool calls and, while streaming, a possible marker's start. */
  content: string;
  calls: PartialToolCall[];
  /** At the end: part of the output looked like a tool call but is not one (unclosed, not JSON). */
  malformed: boolean;
}

export interface ToolCallParser {
  /** As vLLM's --tool-call-parser names it. */
  readonly name: string;
  /** Ids the family's templates accept when calls are fed back (Mistral's: 9 letters and digits). */
  readonly idStyle: "openai" | "mistral";
  /**
   * `final`: the output is whole (nothing is held back). `cache`: the scans of this output before it
   * grew (a stream's), resumed instead of repeated.
   */
  parse(text: string, final: boolean, cache?: ScanCache): ParsedOutput;
}

/** The call whose object opens at `text[start]`, and where it ends (undefined while it is open). */
export function readCall(
  text: string,
  start: number,
  cache?: ScanCache,
): { call: PartialToolCall; end: number | undefined } {
  const scanned = scanCallObject(text, start, cache);
  const end = scanned.end;
  return { call: toCall(text, start, scanned), end };
}

function toCall(text: string, start: number, scanned: ScannedCall): PartialToolCall {
  const { name, argsStart, argsEnd, end } = scanned;
  let args = argsStart === undefined ? "" : text.slice(argsStart, argsEnd ?? text.length);
  // Arguments written as a JSON string holding the object are streamed once whole, decoded.
  if (args.startsWith('"')) args = argsEnd === undefined ? "" : decodeArguments(args);
  if (end === undefined) return { name, arguments: args, complete: false };
  const whole = parseJson(text.slice(start, end));
  const complete = name !== undefined && whole !== undefined;
  return { name, arguments: argsStart === undefined ? "{}" : args, complete };
}

function decodeArguments(literal: string): string {
  const value = parseJson(literal);
  return typeof value === "string" ? value : "";
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Calls written as a JSON array of objects (Mistral's `[TOOL_CALLS][...]`, and the output
 * tool_choice "required" forces), from `text[start]` on. A bare object (no array) is read as one call.
 */
export function readCallArray(
  text: string,
  start: number,
  final: boolean,
  cache?: ScanCache,
): Omit<ParsedOutput, "content"> {
  const calls: PartialToolCall[] = [];
  let i = skipSpace(text, start);
  if (i >= text.length) return { calls, malformed: final };
  const array = text[i] === "[";
  if (array) i = skipSpace(text, i + 1);
  while (i < text.length) {
    if (text[i] === "]" && array) return { calls, malformed: final && !rest(text, i + 1) };
    if (text[i] !== "{") return { calls, malformed: true };
    const { call, end } = readCall(text, i, cache);
    calls.push(call);
    if (end === undefined) return { calls, malformed: final };
    if (!call.complete) return { calls, malformed: true };
    if (!array) return { calls, malformed: final && !rest(text, end) };
    i = skipSpace(text, end);
    if (text[i] === ",") i = skipSpace(text, i + 1);
  }
  return { calls, malformed: final };
}

/** Nothing but whitespace from `i` on. */
function rest(text: string, i: number): boolean {
  return skipSpace(text, i) === text.length;
}

/** The length of the longest suffix of `text` that is a proper prefix of `marker` (held back while streaming). */
export function markerPrefixLength(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--)
    if (text.endsWith(marker.slice(0, n))) return n;
  return 0;
}

// Llama 3.1-3.3's JSON tool calls (vLLM's "llama3_json" parser): the whole reply is the call,
// `{"name": ..., "parameters": {...}}`, optionally after <|python_tag|>, several separated by ";".
// Only a reply that starts so (after whitespace) is read as calls; while it could still become one
// (empty, or a prefix of <|python_tag|>, or an object not yet closed) nothing is sent as content, and
// if at the end it is not a call after all, the whole reply is content.
import { type ScanCache, skipSpace } from "./json-object-scan.ts";
import {
  type ParsedOutput,
  type PartialToolCall,
  readCall,
  type ToolCallParser,
} from "./tool-call-parser.ts";

const PYTHON_TAG = "<|python_tag|>";

export const llama3JsonParser: ToolCallParser = {
  name: "llama3_json",
  idStyle: "openai",
  parse(text: string, final: boolean, cache?: ScanCache): ParsedOutput {
    const start = skipSpace(text, 0);
    const rest = text.slice(start);
    if (!final && PYTHON_TAG.startsWith(rest)) return { content: "", calls: [], malformed: false };
    let i: number;
    if (rest.startsWith(PYTHON_TAG)) i = skipSpace(text, start + PYTHON_TAG.length);
    else if (rest.startsWith("{")) i = start;
    else return { content: text, calls: [], malformed: false };
    const calls: PartialToolCall[] = [];
    while (i < text.length) {
      if (text[i] !== "{") return { content: "", calls, malformed: true };
      const { call, end } = readCall(text, i, cache);
      calls.push(call);
      if (end === undefined) return { content: "", calls, malformed: final };
      if (!call.complete) return { content: "", calls, malformed: true };
      i = skipSpace(text, end);
      if (text[i] === ";") i = skipSpace(text, i + 1);
    }
    return { content: "", calls, malformed: final && calls.length === 0 };
  },
};

// Qwen's and Hermes' tool calls (vLLM's "hermes" parser): each call is a JSON object
// `{"name": ..., "arguments": {...}}` between <tool_call> and </tool_call>, several calls one after
// the other. Text before the first call is content; text between or after calls is content too unless
// it is only whitespace (the newlines the templates put between calls). A call left without its
// closing tag is still a call when its object is whole (the model stopped at its end-of-turn token).
import { type ScanCache, skipSpace } from "./json-object-scan.ts";
import {
  markerPrefixLength,
  type ParsedOutput,
  type PartialToolCall,
  readCall,
  type ToolCallParser,
} from "./tool-call-parser.ts";

const START = "<tool_call>";
const END = "</tool_call>";

export const hermesParser: ToolCallParser = {
  name: "hermes",
  idStyle: "openai",
  parse(text: string, final: boolean, cache?: ScanCache): ParsedOutput {
    let content = "";
    const calls: PartialToolCall[] = [];
    let i = 0;
    for (;;) {
      const at = text.indexOf(START, i);
      let segment = at < 0 ? text.slice(i) : text.slice(i, at);
      if (at < 0 && !final) segment = segment.slice(0, segment.length - markerPrefixLength(segment, START));
      if (i === 0 || /\S/.test(segment)) content += segment;
      if (at < 0) return { content, calls, malformed: false };
      const open = skipSpace(text, at + START.length);
      if (open >= text.length) return { content, calls, malformed: final };
      if (text[open] !== "{") return { content, calls, malformed: true };
      const { call, end } = readCall(text, open, cache);
      calls.push(call);
      if (end === undefined) return { content, calls, malformed: final };
      if (!call.complete) return { content, calls, malformed: true };
      const close = skipSpace(text, end);
      if (text.startsWith(END, close)) i = close + END.length;
      else if (END.startsWith(text.slice(close))) return { content, calls, malformed: false };
      else return { content, calls, malformed: true };
    }
  },
};

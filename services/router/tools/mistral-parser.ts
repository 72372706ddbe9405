// Mistral's tool calls (vLLM's "mistral" parser, tokenizer versions up to v7): the special token
// [TOOL_CALLS] then a JSON array of `{"name": ..., "arguments": {...}}` objects. Text before the marker
// is content. Mistral's templates check that a call's id is 9 letters and digits when it is fed back,
// so this parser's calls get such ids. (The v11 form `[TOOL_CALLS]name[ARGS]{...}` is not read.)
import type { ScanCache } from "./json-object-scan.ts";
import {
  markerPrefixLength,
  type ParsedOutput,
  readCallArray,
  type ToolCallParser,
} from "./tool-call-parser.ts";

const MARKER = "[TOOL_CALLS]";

export const mistralParser: ToolCallParser = {
  name: "mistral",
  idStyle: "mistral",
  parse(text: string, final: boolean, cache?: ScanCache): ParsedOutput {
    const at = text.indexOf(MARKER);
    if (at < 0) {
      const held = final ? 0 : markerPrefixLength(text, MARKER);
      return { content: text.slice(0, text.length - held), calls: [], malformed: false };
    }
    return { content: text.slice(0, at), ...readCallArray(text, at + MARKER.length, final, cache) };
  },
};

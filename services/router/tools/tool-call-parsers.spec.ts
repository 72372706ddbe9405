import assert from "node:assert/strict";
import { namedCallParser, requiredCallsParser } from "./forced-tool-calls.ts";
import { hermesParser } from "./hermes-parser.ts";
import { llama3JsonParser } from "./llama3-json-parser.ts";
import { mistralParser } from "./mistral-parser.ts";
import { parseMessage, ToolCallStream } from "./tool-call-output.ts";
import type { ToolCallParser } from "./tool-call-parser.ts";
import { parserForTemplate } from "./tool-call-parsers.ts";

interface Expected {
  content: string | null;
  calls: { name: string; arguments: string }[];
}

interface Case {
  name: string;
  parser: ToolCallParser;
  text: string;
  expected: Expected;
}

const weather = '{"name": "get_weather", "arguments": {"city": "Köln", "unit": "c"}}';
const time = '{"name": "get_time", "arguments": {"zone": "Europe/Berlin"}}';
const call = (name: string, args: string) => ({ name, arguments: args });

const CASES: Case[] = [
  {
    name: "hermes: one call",
    parser: hermesParser,
    text: `<tool_call>\n${weather}\n</tool_call>`,
    expected: { content: null, calls: [call("get_weather", '{"city": "Köln", "unit": "c"}')] },
  },
  {
    name: "hermes: text, then two calls",
    parser: hermesParser,
    text: `Let me check <both>.\n<tool_call>\n${weather}\n</tool_call>\n<tool_call>\n${time}\n</tool_call>`,
    expected: {
      content: "Let me check <both>.\n",
      calls: [
        call("get_weather", '{"city": "Köln", "unit": "c"}'),
        call("get_time", '{"zone": "Europe/Berlin"}'),
      ],
    },
  },
  {
    name: "hermes: a call without its closing tag (the model stopped at end of turn)",
    parser: hermesParser,
    text: '<tool_call>\n{"name": "ping", "arguments": {}}',
    expected: { content: null, calls: [call("ping", "{}")] },
  },
  {
    name: "hermes: arguments before the name, and arguments as a JSON string",
    parser: hermesParser,
    text: '<tool_call>{"arguments": "{\\"q\\": \\"a;b\\"}", "name": "search"}</tool_call>',
    expected: { content: null, calls: [call("search", '{"q": "a;b"}')] },
  },
  {
    name: "hermes: no call, with text that starts like the marker",
    parser: hermesParser,
    text: "a < b, and <tool is not <tool_call",
    expected: { content: "a < b, and <tool is not <tool_call", calls: [] },
  },
  {
    name: "llama3_json: one call",
    parser: llama3JsonParser,
    text: '{"name": "get_weather", "parameters": {"city": "Paris", "days": [1, 2]}}',
    expected: { content: null, calls: [call("get_weather", '{"city": "Paris", "days": [1, 2]}')] },
  },
  {
    name: "llama3_json: <|python_tag|> and two calls separated by ;",
    parser: llama3JsonParser,
    text: '<|python_tag|>{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": "}{"}}',
    expected: { content: null, calls: [call("a", "{}"), call("b", '{"x": "}{"}')] },
  },
  {
    name: "llama3_json: a JSON reply that is no call is content",
    parser: llama3JsonParser,
    text: '{"answer": 42}',
    expected: { content: '{"answer": 42}', calls: [] },
  },
  {
    name: "llama3_json: plain text",
    parser: llama3JsonParser,
    text: "Paris is the capital {of France}.",
    expected: { content: "Paris is the capital {of France}.", calls: [] },
  },
  {
    name: "mistral: two calls",
    parser: mistralParser,
    text: `[TOOL_CALLS][${weather}, ${time}]`,
    expected: {
      content: null,
      calls: [
        call("get_weather", '{"city": "Köln", "unit": "c"}'),
        call("get_time", '{"zone": "Europe/Berlin"}'),
      ],
    },
  },
  {
    name: "mistral: text before the call",
    parser: mistralParser,
    text: `Sure [x]. [TOOL_CALLS] [${time}]`,
    expected: { content: "Sure [x]. ", calls: [call("get_time", '{"zone": "Europe/Berlin"}')] },
  },
  {
    name: "mistral (tokenizer v11+): name[ARGS]{...}, two calls",
    parser: mistralParser,
    text: 'On it.[TOOL_CALLS]get_weather[ARGS]{"city": "Köln", "unit": "c"}[TOOL_CALLS]get_time[ARGS]{"zone": "[ARGS]"}',
    expected: {
      content: "On it.",
      calls: [call("get_weather", '{"city": "Köln", "unit": "c"}'), call("get_time", '{"zone": "[ARGS]"}')],
    },
  },
  {
    name: "mistral: no call",
    parser: mistralParser,
    text: "See [TOOL docs]",
    expected: { content: "See [TOOL docs]", calls: [] },
  },
  {
    name: "named tool_choice: the output is the arguments",
    parser: namedCallParser("get_weather", "openai"),
    text: ' {"city": "Zürich"}',
    expected: { content: null, calls: [call("get_weather", '{"city": "Zürich"}')] },
  },
  {
    name: 'tool_choice "required": an array of calls',
    parser: requiredCallsParser("openai"),
    text: '[{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}]',
    expected: { content: null, calls: [call("a", '{"x": 1}'), call("b", "{}")] },
  },
];

/** The message an OpenAI client assembles from the stream's deltas. */
function streamed(parser: ToolCallParser, pieces: readonly string[], parallel = true): Expected {
  const stream = new ToolCallStream(parser, parallel);
  let content = "";
  const calls: { id: string; name: string; arguments: string }[] = [];
  const apply = (delta: ReturnType<ToolCallStream["push"]>) => {
    content += delta.content;
    for (const d of delta.toolCalls) {
      if (d.id !== undefined) {
        assert.equal(d.index, calls.length, "calls open in order");
        assert.equal(d.type, "function");
        assert.ok(d.function.name, "the first delta names the function");
        calls.push({ id: d.id, name: d.function.name, arguments: "" });
      }
      const open = calls[d.index];
      assert.ok(open, `delta for call ${d.index} before it was opened`);
      assert.equal(d.function.name === undefined || d.id !== undefined, true, "the name is sent once");
      open.arguments += d.function.arguments;
    }
  };
  for (const piece of pieces) apply(stream.push(piece));
  apply(stream.finish());
  assert.equal(stream.called, calls.length > 0);
  return {
    content: content === "" && calls.length > 0 ? null : content,
    calls: calls.map((c) => ({ name: c.name, arguments: c.arguments })),
  };
}

describe("tool-call parsers", () => {
  for (const c of CASES) {
    it(`${c.name}: whole`, () => {
      const message = parseMessage(c.parser, c.text, true);
      assert.deepEqual(
        { content: message.content, calls: message.toolCalls.map((t) => t.function) },
        c.expected,
      );
      for (const t of message.toolCalls) {
        assert.equal(t.type, "function");
        assert.match(t.id, c.parser.idStyle === "mistral" ? /^[A-Za-z0-9]{9}$/ : /^call_[A-Za-z0-9]{24}$/);
        assert.doesNotThrow(() => JSON.parse(t.function.arguments));
      }
    });

    it(`${c.name}: streamed, split at every position, and one character at a time`, () => {
      for (let at = 0; at <= c.text.length; at++) {
        const pieces = [c.text.slice(0, at), c.text.slice(at)];
        assert.deepEqual(streamed(c.parser, pieces), c.expected, `split at ${at}`);
      }
      assert.deepEqual(streamed(c.parser, [...c.text]), c.expected);
    });
  }

  it("streams content as it comes, holding back only what may start a marker", () => {
    const stream = new ToolCallStream(hermesParser, true);
    assert.equal(stream.push("Hello <").content, "Hello ");
    assert.equal(stream.push("b>").content, "<b>");
    assert.equal(stream.push(" <tool_").content, " ");
    const opened = stream.push('call>{"name": "f", "arguments": {"a"');
    assert.equal(opened.content, "");
    assert.deepEqual(opened.toolCalls[0]?.function, { name: "f", arguments: '{"a"' });
    assert.deepEqual(stream.push(": 1}}").toolCalls, [{ index: 0, function: { arguments: ": 1}" } }]);
  });

  it("sends nothing of a Llama reply opening with { until it is a call or the reply ends", () => {
    const stream = new ToolCallStream(llama3JsonParser, true);
    assert.deepEqual(stream.push('{"na'), { content: "", toolCalls: [] });
    assert.equal(stream.push('me": "f", "parameters": {}}').toolCalls[0]?.function.name, "f");
    const plain = new ToolCallStream(llama3JsonParser, true);
    assert.equal(plain.push("  <|python").content, "");
    assert.equal(plain.push(" no").content, "  <|python no");
  });

  it("keeps only the first call when parallel_tool_calls is false", () => {
    const text = `<tool_call>${weather}</tool_call><tool_call>${time}</tool_call>`;
    assert.deepEqual(
      parseMessage(hermesParser, text, false).toolCalls.map((t) => t.function.name),
      ["get_weather"],
    );
    assert.deepEqual(
      streamed(hermesParser, [...text], false).calls.map((t) => t.name),
      ["get_weather"],
    );
  });

  it("gives output that is not a well-formed call back whole as content (not streamed)", () => {
    for (const [parser, text] of [
      [hermesParser, '<tool_call>\n{"name": "f", "arguments": {"a": }}\n</tool_call>'],
      [hermesParser, '<tool_call>\n{"name": "f", "argu'],
      [llama3JsonParser, '<|python_tag|>{"name": "f"'],
      [mistralParser, '[TOOL_CALLS][{"name": "f", "arguments": {}}, oops]'],
      [mistralParser, '[TOOL_CALLS]f[ARGS]{"a": 1} and more'],
      [mistralParser, "[TOOL_CALLS]not a name[ARGS]{}"],
      [namedCallParser("f", "openai"), '{"city": "Par'],
      [requiredCallsParser("openai"), "[]"],
    ] as const) {
      assert.deepEqual(parseMessage(parser, text, true), { content: text, toolCalls: [] }, text);
    }
  });

  it("picks the parser a chat template shows", () => {
    assert.equal(parserForTemplate("{{- '<tool_call>\\n' }}")?.name, "hermes");
    assert.equal(parserForTemplate("{{ '[TOOL_CALLS]' }}")?.name, "mistral");
    assert.equal(parserForTemplate("{{ 'Environment: ipython' }}")?.name, "llama3_json");
    assert.equal(parserForTemplate("{{ messages[0].content }}"), undefined);
  });
});

import assert from "node:assert/strict";
import { ChatTemplate } from "../models/chat-template.ts";
import { parseChatRequest } from "./openai-request.ts";
import { toolCallPlan } from "./tool-call-plan.ts";

const messages = [{ role: "user", content: "Weather in Paris?" }];
const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const time = { type: "function", function: { name: "get_time", strict: true } };
const chat = (extra: Record<string, unknown>) => parseChatRequest({ messages, ...extra });
const error = (extra: Record<string, unknown>) => chat(extra).error?.message ?? "";

describe("OpenAI tools in chat requests", () => {
  it("passes the tools to the chat template as OpenAI lists them, nulls left out", () => {
    const parsed = chat({
      tools: [weather, { type: "function", function: { name: "get_time", description: null } }],
    });
    const prompt = parsed.value?.prompt;
    assert.ok(prompt?.type === "chat");
    assert.deepEqual(prompt.options?.tools, [weather, { type: "function", function: { name: "get_time" } }]);
    assert.deepEqual(parsed.value?.tools?.choice, "auto");
    assert.equal(parsed.value?.sampling.structured, undefined, "auto leaves the output free");
    // tool_choice none still shows the template the tools (vLLM's default), and constrains nothing.
    const none = chat({ tools: [weather], tool_choice: "none" }).value;
    assert.ok(none?.prompt.type === "chat");
    assert.deepEqual(none.prompt.options?.tools, [weather]);
    assert.equal(none.sampling.structured, undefined);
  });

  it("refuses malformed tools and choices, naming the field", () => {
    assert.match(error({ tools: [{ type: "custom", custom: {} }] }), /^tools\.0\.type: only function tools/);
    assert.match(
      error({ tools: [{ type: "function", function: { name: "a b" } }] }),
      /^tools\.0\.function\.name: /,
    );
    assert.match(error({ tools: [{ type: "function", function: {} }] }), /^tools\.0\.function\.name: /);
    assert.match(
      error({ tools: [{ type: "function", function: { name: "f", parameters: "{}" } }] }),
      /^tools\.0\.function\.parameters: must be a JSON Schema object/,
    );
    assert.match(
      error({ tools: [weather, weather] }),
      /^tools\.1\.function\.name: "get_weather" is defined twice/,
    );
    assert.match(error({ tools: [] }), /^tools: must not be empty/);
    assert.match(
      error({ tools: [weather], tool_choice: "always" }),
      /^tool_choice: must be "none", "auto", "required"/,
    );
    assert.match(error({ tool_choice: "required" }), /^tool_choice: needs tools/);
    assert.match(
      error({ tools: [weather], tool_choice: { type: "function", function: { name: "get_time" } } }),
      /^tool_choice\.function\.name: no tool named "get_time" in tools/,
    );
    assert.match(error({ tools: [weather], parallel_tool_calls: "yes" }), /^parallel_tool_calls: /);
    assert.equal(chat({ tool_choice: "none" }).value?.tools, undefined, "none without tools is no tools");
  });

  it("hands an assistant's calls to the template with parsed arguments, and a tool message's call id", () => {
    const parsed = parseChatRequest({
      messages: [
        ...messages,
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city": "Paris"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "Sunny" },
      ],
      tools: [weather],
    });
    const prompt = parsed.value?.prompt;
    assert.ok(prompt?.type === "chat", parsed.error?.message);
    assert.deepEqual(prompt.messages.slice(1), [
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: { city: "Paris" } } },
        ],
      },
      { role: "tool", content: "Sunny", tool_call_id: "call_1" },
    ]);
  });

  it("refuses malformed tool messages and calls, naming the field", () => {
    const call = (args: string) => ({ id: "c", type: "function", function: { name: "f", arguments: args } });
    const withMessage = (message: unknown) =>
      parseChatRequest({ messages: [...messages, message] }).error?.message;
    assert.match(withMessage({ role: "tool", content: "x" }) ?? "", /^messages\.1\.tool_call_id: /);
    assert.match(
      withMessage({ role: "assistant", tool_calls: [call("{oops")] }) ?? "",
      /^messages\.1\.tool_calls\.0\.function\.arguments: must be a JSON object/,
    );
    assert.match(
      withMessage({ role: "assistant", tool_calls: [call("[1]")] }) ?? "",
      /^messages\.1\.tool_calls\.0\.function\.arguments: /,
    );
    assert.match(
      withMessage({ role: "user", content: "x", tool_calls: [call("{}")] }) ?? "",
      /^messages\.1\.tool_calls: /,
    );
    assert.match(
      withMessage({ role: "assistant", tool_calls: [{ id: "c", type: "web", function: {} }] }) ?? "",
      /^messages\.1\.tool_calls\.0\.type: /,
    );
  });

  it("forces a named function with its parameters' schema as structured output", () => {
    const named = chat({
      tools: [weather, time],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    assert.deepEqual(named.value?.sampling.structured, {
      kind: "json_schema",
      schema: weather.function.parameters,
      strict: false,
    });
    const noParameters = chat({
      tools: [weather, time],
      tool_choice: { type: "function", function: { name: "get_time" } },
    });
    assert.deepEqual(noParameters.value?.sampling.structured, {
      kind: "json_schema",
      schema: { type: "object", properties: {} },
      strict: true,
    });
  });

  it("refuses a forced choice beside another output constraint, naming tool_choice", () => {
    const named = { type: "function", function: { name: "get_weather" } };
    assert.match(
      error({ tools: [weather], tool_choice: named, response_format: { type: "json_object" } }),
      /^tool_choice: a forced tool choice constrains the output, and so does response_format/,
    );
    assert.match(
      error({ tools: [weather], tool_choice: "required", guided_regex: "a+" }),
      /^tool_choice: .*guided_regex/,
    );
    const auto = chat({ tools: [weather], response_format: { type: "json_object" } });
    assert.deepEqual(
      auto.value?.sampling.structured,
      { kind: "json_object" },
      "auto leaves the constraint alone",
    );
    assert.equal(
      chat({ tools: [weather], tool_choice: named }).value?.structuredField,
      "tools.0.function.parameters",
    );
  });

  it('forces "required" as an array of calls, one of the tools each (at most one without parallel calls)', () => {
    const call = (name: string, parameters: unknown) => ({
      type: "object",
      properties: { name: { type: "string", enum: [name] }, parameters },
      required: ["name", "parameters"],
      additionalProperties: false,
    });
    const items = {
      anyOf: [
        call("get_weather", weather.function.parameters),
        call("get_time", { type: "object", properties: {} }),
      ],
    };
    assert.deepEqual(chat({ tools: [weather, time], tool_choice: "required" }).value?.sampling.structured, {
      kind: "json_schema",
      schema: { type: "array", minItems: 1, items },
      strict: false,
    });
    const single = chat({ tools: [weather, time], tool_choice: "required", parallel_tool_calls: false });
    assert.deepEqual(single.value?.sampling.structured, {
      kind: "json_schema",
      schema: { type: "array", minItems: 1, maxItems: 1, items },
      strict: false,
    });
  });
});

describe("toolCallPlan", () => {
  const tools = (choice: unknown) => chat({ tools: [weather], tool_choice: choice }).value?.tools;
  const model = (template: string, toolCallParser?: "mistral") => ({
    id: "m",
    chatTemplate: new ChatTemplate(template),
    toolCallParser,
  });
  const qwen = model("{{- '<tool_call>' }}");

  it("reads auto choices with the parser the template shows, or the config names", () => {
    assert.equal(toolCallPlan(tools("auto"), qwen, undefined, undefined).value?.name, "hermes");
    assert.equal(
      toolCallPlan(tools("auto"), model("x", "mistral"), undefined, undefined).value?.name,
      "mistral",
    );
  });

  it("reads forced choices as the JSON they are constrained to, and none not at all", () => {
    assert.equal(toolCallPlan(tools("required"), qwen, undefined, undefined).value?.name, "required");
    const named = toolCallPlan(
      tools({ type: "function", function: { name: "get_weather" } }),
      model("x"),
      undefined,
      undefined,
    );
    assert.equal(named.value?.name, "named");
    assert.equal(toolCallPlan(tools("none"), qwen, undefined, undefined).value, undefined);
    assert.equal(toolCallPlan(undefined, qwen, undefined, undefined).value, undefined);
  });

  it("refuses auto for a model with no known format, and Mistral's with special tokens skipped", () => {
    assert.match(
      toolCallPlan(tools("auto"), model("{{ messages }}"), undefined, undefined).error?.message ?? "",
      /^tool_choice: model "m" has no tool-call parser/,
    );
    assert.match(
      toolCallPlan(tools("auto"), model("[TOOL_CALLS]"), undefined, true).error?.message ?? "",
      /^skip_special_tokens: /,
    );
  });
});

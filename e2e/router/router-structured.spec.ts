// Structured outputs through `tessera router` on real processes: the official `openai` Python client
// sends 200 chat completions with response_format json_schema (five schemas, strict and not, 16 at a
// time, so the workers batch constrained rows together) to a random-weights model, and every one that
// was not cut by max_tokens must parse and validate against its schema (Python's jsonschema where
// installed, else the spec's own check); json_object, guided_choice and guided_regex answers match
// theirs, and a bad schema, regex or grammar, or two constraints at once, is a 400 naming the field.
// gRPC clients set SamplingParams.structured.
import assert from "node:assert/strict";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { FinishReason } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { schemaProblem } from "../../services/worker/testdata/json-schema-check.ts";
import { requirePythonModules, runPythonJson } from "../python-client.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "./fleet.ts";
import { generate, textOf } from "./grpc-stream.ts";
import { STRUCTURED_SCHEMAS } from "./structured-schemas.ts";

const CLIENTS = path.join(import.meta.dirname, "structured-clients.py");
const COUNT = 200;

interface Answer {
  text: string;
  finish_reason: string;
}

interface PythonAnswers {
  validator: "jsonschema" | null;
  completions: (Answer & { schema: number; verdict: string | null })[];
  json_object: Answer;
  choice: Answer;
  regex: Answer;
  refusals: { status: number; message: string; param: string | null }[];
}

async function runClients(request: Record<string, unknown>): Promise<PythonAnswers> {
  requirePythonModules("openai");
  return runPythonJson<PythonAnswers>(CLIENTS, request);
}

describe("structured outputs through tessera router (e2e)", function () {
  this.timeout(180_000);
  let workers: Served[];
  let router: RunningRouter;
  let grpc: GrpcClient;

  before(async () => {
    workers = await sharedWorkers();
    router = await startRouter(workers);
    grpc = new GrpcClient(router.grpcAddress);
  });

  after(async () => {
    grpc?.close();
    await router?.stop();
  });

  it(`${COUNT} json_schema chat completions from the openai Python client all parse and validate (unless cut by max_tokens)`, async () => {
    const answers = await runClients({
      base_url: `${router.httpUrl}/v1`,
      model: "tiny-llama",
      max_tokens: 64,
      schemas: STRUCTURED_SCHEMAS,
      count: COUNT,
      concurrency: 16,
    });
    assert.equal(answers.completions.length, COUNT);
    let finished = 0;
    for (const c of answers.completions) {
      if (c.finish_reason === "length") continue;
      assert.equal(c.finish_reason, "stop", c.text);
      finished++;
      const problem = schemaProblem(STRUCTURED_SCHEMAS[c.schema]!, JSON.parse(c.text));
      assert.equal(problem, undefined, `schema ${c.schema}: ${c.text}: ${problem}`);
      if (answers.validator === "jsonschema") assert.equal(c.verdict, "valid", c.text);
    }
    // Not vacuous: most finish within max_tokens.
    const cut = answers.completions.filter((c) => c.finish_reason === "length");
    assert.ok(
      finished >= COUNT * 0.75,
      `only ${finished} of ${COUNT} finished before max_tokens; cut: ${JSON.stringify(cut.slice(0, 6).map((c) => c.text))}`,
    );

    if (answers.json_object.finish_reason === "stop") {
      const value: unknown = JSON.parse(answers.json_object.text);
      assert.ok(
        typeof value === "object" && value !== null && !Array.isArray(value),
        answers.json_object.text,
      );
    }
    assert.ok(["yes", "no", "not sure"].includes(answers.choice.text), answers.choice.text);
    assert.equal(answers.choice.finish_reason, "stop");
    assert.match(answers.regex.text, /^[A-Z][a-z]{1,5}-[0-9]{2}$/);
    assert.equal(answers.regex.finish_reason, "stop");

    const refused = answers.refusals;
    assert.deepEqual(
      refused.map((r) => [r.status, r.param]),
      [
        [400, "response_format.json_schema.schema"],
        [400, "guided_regex"],
        [400, "guided_grammar"],
        [400, "guided_choice"],
      ],
    );
    assert.match(refused[0]!.message, /strin/);
    assert.match(refused[1]!.message, /missing \)/);
    assert.match(refused[2]!.message, /undefined_rule/);
    assert.match(refused[3]!.message, /only one structured output constraint/);
  });

  it("gRPC clients set SamplingParams.structured; an invalid one is INVALID_ARGUMENT naming it", async () => {
    const choices = ["alpha", "beta", "gamma ray"];
    for (const seed of [1n, 2n, 3n]) {
      const out = await generate(grpc, {
        prompt: { case: "text", value: "Pick one:" },
        sampling: {
          maxTokens: 16,
          temperature: 1,
          seed,
          structured: { kind: { case: "choice", value: { choices } } },
        },
      });
      assert.equal(out.error, undefined);
      assert.ok(choices.includes(textOf(out)), textOf(out));
      assert.equal(out.messages.at(-1)?.finishReason, FinishReason.STOP);
    }
    const schema = STRUCTURED_SCHEMAS[3]!;
    const json = await generate(grpc, {
      prompt: { case: "text", value: "A point:" },
      sampling: {
        maxTokens: 64,
        temperature: 0,
        structured: {
          kind: { case: "jsonSchema", value: { schemaJson: JSON.stringify(schema), strict: true } },
        },
      },
    });
    assert.equal(json.messages.at(-1)?.finishReason, FinishReason.STOP, textOf(json));
    assert.equal(schemaProblem(schema, JSON.parse(textOf(json))), undefined, textOf(json));
    const bad = await generate(grpc, {
      prompt: { case: "text", value: "x" },
      sampling: { maxTokens: 4, structured: { kind: { case: "regex", value: "a(?=b)" } } },
    });
    assert.equal(bad.error?.code, status.INVALID_ARGUMENT);
    assert.match(bad.error?.details ?? "", /^structured: regex: lookaround/);
  });
});

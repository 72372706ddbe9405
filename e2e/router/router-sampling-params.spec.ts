// n, best_of, logit_bias, echo and prompt_logprobs through a real `tessera router` in front of a real
// `tessera serve`: over HTTP with the official `openai` Python client (in $PYTHON, default python3;
// without it the test fails saying what to install) and over the router's gRPC door. n=4 must come
// from one prefill: the worker's prompt-token counters (tessera_prompt_tokens_by_source_total) grow by
// one prompt computed and three forked around the n=4 request.
import assert from "node:assert/strict";
import path from "node:path";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { Tokenizer } from "../../services/tokenizer/tokenizer.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import { requirePythonModules, runPythonJson } from "../python-client.ts";
import { metricValue, type RunningRouter, startRouter } from "./fleet.ts";
import { generate } from "./grpc-stream.ts";

const CLIENT = path.join(import.meta.dirname, "python-sampling-params.py");
const MODEL = "tiny-llama";
const VOCAB = 512;
const FORCED = 77;

// biome-ignore lint/suspicious/noExplicitAny: the Python client's JSON answers, checked field by field.
const runPython = (request: Record<string, unknown>): Promise<any> => runPythonJson(CLIENT, request);

describe("n, best_of, logit_bias, echo and prompt_logprobs through tessera router (e2e)", function () {
  this.timeout(180_000);
  let worker: Served;
  let router: RunningRouter;
  let grpc: GrpcClient;
  let tokenizer: Tokenizer;
  let workerMetrics: string;
  // A prompt no other request of this spec sends, so no prefix cache can serve it.
  const prompt = "Four friends met at the old lighthouse on a windy evening";

  before(async () => {
    requirePythonModules("openai");
    const modelDir = await tinyCheckpoint();
    tokenizer = Tokenizer.fromFile(modelDir);
    worker = await startServe(modelDir, ["--metrics-port", "0"]);
    await waitUntilServing(worker.address, 60_000);
    const port = worker.logs.find((l) => l["msg"] === "metrics served at /metrics")?.["metricsPort"];
    workerMetrics = `http://127.0.0.1:${port}/metrics`;
    router = await startRouter([worker]);
    grpc = new GrpcClient(router.grpcAddress);
  });

  after(async () => {
    grpc?.close();
    await router?.stop();
    if (worker && worker.child.exitCode === null) worker.child.kill("SIGTERM");
    await worker?.exited;
  });

  const promptTokens = (source: string) =>
    metricValue(workerMetrics, "tessera_prompt_tokens_by_source_total", { source });

  it("n=4 (openai Python client) returns 4 distinct sampled choices from one prefill", async () => {
    const length = tokenizer.encode(prompt, { addSpecialTokens: true }).length;
    const computed = await promptTokens("computed");
    const forked = await promptTokens("fork");
    const cached = await promptTokens("local_cache");
    const { n4 } = await runPython({ base_url: `${router.httpUrl}/v1`, model: MODEL, step: "n4", prompt });
    assert.deepEqual(
      n4.choices.map((c: { index: number }) => c.index),
      [0, 1, 2, 3],
    );
    assert.equal(new Set(n4.choices.map((c: { text: string }) => c.text)).size, 4, JSON.stringify(n4));
    const { prompt_tokens, completion_tokens, total_tokens } = n4.usage;
    assert.deepEqual(
      { prompt_tokens, completion_tokens, total_tokens },
      { prompt_tokens: length, completion_tokens: 32, total_tokens: length + 32 },
      "the prompt counted once, the completions summed",
    );
    assert.equal((await promptTokens("computed")) - computed, length, "the prompt computed once");
    assert.equal((await promptTokens("fork")) - forked, 3 * length, "three sequences forked from it");
    assert.equal((await promptTokens("local_cache")) - cached, 0);
  });

  it("streams n=4 by index, takes chat n, best_of, logit_bias, echo with logprobs and prompt_logprobs", async () => {
    const got = await runPython({
      base_url: `${router.httpUrl}/v1`,
      model: MODEL,
      step: "rest",
      prompt,
      forced_id: FORCED,
      vocab_size: VOCAB,
    });
    const whole = await runPython({ base_url: `${router.httpUrl}/v1`, model: MODEL, step: "n4", prompt });
    // The same seed: the streamed choices are the whole ones, choice by choice.
    assert.deepEqual(
      got.n4_streamed.texts,
      whole.n4.choices.map((c: { text: string }) => c.text),
    );
    assert.equal(got.n4_streamed.usage.completion_tokens, 32);
    assert.equal(got.chat_n4.choices.length, 4);
    assert.equal(new Set(got.chat_n4.choices.map((c: { text: string }) => c.text)).size, 4);
    assert.equal(got.chat_n4.usage.completion_tokens, 32);
    assert.equal(got.best_of.choices.length, 1);
    assert.equal(got.best_of.usage.completion_tokens, 8);

    // logit_bias +100 forces the id, and the logprobs stay the raw model's (far from certainty).
    assert.equal(got.logit_bias.text, tokenizer.decode(Array(8).fill(FORCED)));
    for (const lp of got.logit_bias.token_logprobs) assert.ok(lp < -1, `${lp}`);

    const promptIds = tokenizer.encode(prompt, { addSpecialTokens: true });
    assert.ok(got.echo.text.startsWith(prompt), got.echo.text);
    assert.equal(got.echo.tokens.length, promptIds.length + 4);
    assert.equal(got.echo.token_logprobs[0], null, "nothing predicts the first prompt token");
    for (const lp of got.echo.token_logprobs.slice(1)) assert.ok(lp <= 0);
    assert.equal(got.echo.usage.prompt_tokens, promptIds.length);

    assert.equal(got.prompt_logprobs.length, promptIds.length);
    assert.equal(got.prompt_logprobs[0], null);
    for (const [i, entry] of got.prompt_logprobs.slice(1).entries()) {
      const own = entry[String(promptIds[i + 1])];
      assert.ok(own && own.logprob <= 0, JSON.stringify(entry));
    }
    assert.ok(got.chat_prompt_logprobs.length > 1);
    assert.equal(got.chat_prompt_logprobs[0], null);

    assert.equal(got.bad_bias.status, 400);
    assert.match(got.bad_bias.message, /logit_bias/);
  });

  it("the gRPC door: n=4 by index, logit_bias, echo and prompt_logprobs", async () => {
    const ids = tokenizer.encode(prompt, { addSpecialTokens: true });
    const sampled = { maxTokens: 6, ignoreEos: true, temperature: 1, seed: 11n };
    const n4 = await generate(grpc, {
      model: MODEL,
      prompt: { case: "text", value: prompt },
      sampling: { ...sampled, n: 4 },
    });
    assert.equal(n4.error, undefined);
    const texts = [0, 1, 2, 3].map((i) =>
      n4.messages
        .filter((m) => m.index === i)
        .map((m) => m.textDelta)
        .join(""),
    );
    assert.equal(new Set(texts).size, 4, JSON.stringify(texts));
    const finishes = n4.messages.filter((m) => m.usage);
    assert.deepEqual(finishes.map((m) => m.index).sort(), [0, 1, 2, 3]);

    const biased = await generate(grpc, {
      model: MODEL,
      prompt: { case: "text", value: prompt },
      sampling: { ...sampled, logitBias: { [FORCED]: 100 } },
    });
    assert.deepEqual(
      biased.messages.flatMap((m) => m.tokens.map((t) => t.tokenId)),
      Array(6).fill(FORCED),
    );

    const echoed = await generate(grpc, {
      model: MODEL,
      prompt: { case: "text", value: prompt },
      sampling: { maxTokens: 2, temperature: 0, echo: true, promptLogprobs: 2 },
    });
    assert.ok(echoed.messages[0]!.textDelta.startsWith(prompt));
    const entries = echoed.messages[0]!.promptLogprobs;
    assert.deepEqual(
      entries.map((t) => t.tokenId),
      ids,
    );
    assert.ok(Number.isNaN(entries[0]!.logprob));
    for (const t of entries.slice(1)) {
      assert.ok(t.logprob <= 0);
      assert.equal(t.topLogprobs.length, 2);
    }

    const bad = await generate(grpc, {
      model: MODEL,
      prompt: { case: "text", value: prompt },
      sampling: { maxTokens: 2, logitBias: { [VOCAB]: 1 } },
    });
    assert.match(bad.error?.details ?? "", /^logit_bias: /);
  });

  it("min_tokens, stop_token_ids, ignore_eos and skip_special_tokens: the same over OpenAI (Python) and gRPC", async () => {
    const bos = 1;
    const eos = 2;
    // Each case forces one id with logit_bias, so what the stopping fields do is certain.
    const cases = [
      { name: "a special token stays in the text", bias: bos, maxTokens: 3, vllm: {} },
      {
        name: "skip_special_tokens leaves it out",
        bias: bos,
        maxTokens: 3,
        vllm: { skip_special_tokens: true },
      },
      { name: "eos ends the generation", bias: eos, maxTokens: 3, vllm: {} },
      { name: "ignore_eos goes on past it", bias: eos, maxTokens: 3, vllm: { ignore_eos: true } },
      { name: "a stop id ends it", bias: FORCED, maxTokens: 6, vllm: { stop_token_ids: [FORCED] } },
      {
        name: "min_tokens holds the stop id back",
        bias: FORCED,
        maxTokens: 6,
        vllm: { stop_token_ids: [FORCED], min_tokens: 3 },
      },
    ];
    const expected = [
      { text: tokenizer.decode([bos, bos, bos]), finish_reason: "length", completion_tokens: 3 },
      { text: "", finish_reason: "length", completion_tokens: 3 },
      { text: "", finish_reason: "stop", completion_tokens: 1 },
      { text: tokenizer.decode([eos, eos, eos]), finish_reason: "length", completion_tokens: 3 },
      { text: "", finish_reason: "stop", completion_tokens: 1 },
      // Held back, the forced id gives way to the next most likely tokens, then comes.
      { finish_reason: "stop", completion_tokens: 4 },
    ];
    const { cases: viaHttp } = await runPython({
      base_url: `${router.httpUrl}/v1`,
      model: MODEL,
      step: "cases",
      prompt,
      cases: cases.map((c) => ({
        max_tokens: c.maxTokens,
        temperature: 0,
        logit_bias: { [c.bias]: 100 },
        extra_body: c.vllm,
      })),
    });
    const reasons: Record<number, string> = { 1: "stop", 2: "length", 3: "stop" };
    for (const [i, c] of cases.entries()) {
      assert.deepEqual({ ...viaHttp[i], ...expected[i] }, viaHttp[i], `${c.name} (OpenAI)`);
      const v = c.vllm as Record<string, unknown>;
      const viaGrpc = await generate(grpc, {
        model: MODEL,
        prompt: { case: "text", value: prompt },
        sampling: {
          maxTokens: c.maxTokens,
          temperature: 0,
          logitBias: { [c.bias]: 100 },
          ...(v["skip_special_tokens"] !== undefined && { skipSpecialTokens: true }),
          ...(v["ignore_eos"] !== undefined && { ignoreEos: true }),
          ...(v["stop_token_ids"] !== undefined && { stopTokenIds: [FORCED] }),
          ...(v["min_tokens"] !== undefined && { minTokens: 3 }),
        },
      });
      assert.equal(viaGrpc.error, undefined);
      const last = viaGrpc.messages.at(-1)!;
      assert.deepEqual(
        {
          text: viaGrpc.messages.map((m) => m.textDelta).join(""),
          finish_reason: reasons[last.finishReason],
          completion_tokens: last.usage?.completionTokens,
        },
        viaHttp[i],
        `${c.name} (gRPC)`,
      );
    }
  });
});

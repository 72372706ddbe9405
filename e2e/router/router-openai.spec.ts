// The router's OpenAI-compatible HTTP front door, called with the official `openai` client:
// completions and chat completions, streamed (SSE, usage) or not, logprobs, models, and the errors a
// client sees as the SDK's typed exceptions.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";
import OpenAI from "openai";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { parseServerTiming } from "../../services/rpc/server-timing.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "./fleet.ts";
import { generate, textOf } from "./grpc-stream.ts";

describe("tessera router over OpenAI HTTP (e2e)", () => {
  let workers: Served[];
  let router: RunningRouter;
  let openai: OpenAI;
  let grpc: GrpcClient;

  before(async () => {
    workers = await sharedWorkers();
    router = await startRouter(workers);
    openai = new OpenAI({ baseURL: `${router.httpUrl}/v1`, apiKey: "none", maxRetries: 0 });
    grpc = new GrpcClient(router.grpcAddress);
  });

  after(async () => {
    grpc?.close();
    await router?.stop();
  });

  it("lists and retrieves the model", async () => {
    const models = await openai.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ["tiny-llama"],
    );
    assert.equal((await openai.models.retrieve("tiny-llama")).id, "tiny-llama");
  });

  it("completes a prompt as the gRPC front door does, with usage and the serving endpoint", async () => {
    const { data, response } = await openai.completions
      .create({ model: "tiny-llama", prompt: "Once upon a time", max_tokens: 12, temperature: 0 })
      .withResponse();
    const viaGrpc = await generate(grpc, {
      prompt: { case: "text", value: "Once upon a time" },
      sampling: { maxTokens: 12 },
    });
    assert.equal(data.object, "text_completion");
    assert.equal(data.choices[0]?.text, textOf(viaGrpc));
    const usage = viaGrpc.messages.at(-1)?.usage;
    assert.deepEqual(data.usage, {
      prompt_tokens: usage?.promptTokens,
      completion_tokens: usage?.completionTokens,
      total_tokens: usage?.totalTokens,
    });
    assert.ok(workers.some((w) => w.address === response.headers.get("x-tessera-endpoint")));
    const timing = parseServerTiming(response.headers.get("server-timing") ?? "");
    assert.ok(timing["worker"]! > 0 && timing["router"]! > timing["worker"]!, JSON.stringify(timing));
  });

  it("streams a completion as server-sent events, ending with the usage", async () => {
    const params = {
      model: "tiny-llama",
      prompt: "The weather today",
      max_tokens: 16,
      temperature: 0,
      ignore_eos: true,
    };
    const stream = await openai.completions.create({
      ...params,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Completions.Completion[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const whole = await openai.completions.create(params);
    assert.ok(chunks.length >= 17, `${chunks.length} chunks`);
    assert.equal(chunks.map((c) => c.choices[0]?.text ?? "").join(""), whole.choices[0]?.text);
    assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, "length");
    assert.deepEqual(chunks.at(-1)?.choices, []);
    assert.equal(chunks.at(-1)?.usage?.completion_tokens, 16);
  });

  it("chats through the model's chat template, streamed or not", async () => {
    const messages = [
      { role: "system" as const, content: "Be brief." },
      { role: "user" as const, content: "Hello!" },
    ];
    const chat = await openai.chat.completions.create({
      model: "tiny-llama",
      messages,
      max_tokens: 10,
      temperature: 0,
    });
    const config = JSON.parse(
      readFileSync(path.join(await tinyCheckpoint(), "tokenizer_config.json"), "utf8"),
    ) as { chat_template: string };
    const rendered = new Template(config.chat_template).render({ messages, add_generation_prompt: true });
    const { tokenIds } = await grpc.unary(Inference.method.tokenize, {
      text: rendered,
      addSpecialTokens: false,
    });
    const viaGrpc = await generate(grpc, {
      prompt: { case: "tokenIds", value: { ids: tokenIds } },
      sampling: { maxTokens: 10 },
    });
    assert.equal(chat.choices[0]?.message.role, "assistant");
    assert.equal(chat.choices[0]?.message.content, textOf(viaGrpc));
    assert.equal(chat.usage?.prompt_tokens, tokenIds.length);

    const stream = await openai.chat.completions.create({
      model: "tiny-llama",
      messages,
      max_tokens: 10,
      temperature: 0,
      stream: true,
    });
    let content = "";
    let role: string | undefined;
    for await (const chunk of stream) {
      role ??= chunk.choices[0]?.delta.role;
      content += chunk.choices[0]?.delta.content ?? "";
    }
    assert.equal(role, "assistant");
    assert.equal(content, chat.choices[0]?.message.content);
  });

  it("serves a gRPC chat prompt as the OpenAI door does, on the router and on a worker, with vLLM's chat fields", async () => {
    const messages = [
      { role: "user" as const, content: "Tell me a story." },
      { role: "assistant" as const, content: "Once upon a" },
    ];
    const continued = { add_generation_prompt: false, continue_final_message: true };
    const chat = await openai.chat.completions.create({
      model: "tiny-llama",
      messages,
      max_tokens: 8,
      temperature: 0,
      ...continued,
    } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    const request = {
      prompt: { case: "chat" as const, value: { messages, continueFinalMessage: true } },
      sampling: { maxTokens: 8, temperature: 0 },
    };
    const worker = new GrpcClient(workers[0]!.address);
    try {
      for (const [door, streamed] of [
        ["router", await generate(grpc, request)],
        ["worker", await generate(worker, request)],
      ] as const) {
        assert.equal(textOf(streamed), chat.choices[0]?.message.content, door);
        assert.equal(streamed.messages.at(-1)?.usage?.promptTokens, chat.usage?.prompt_tokens, door);
      }
      const unused = { chatTemplateKwargs: { enable_thinking: false } };
      const refused = await generate(worker, { prompt: { case: "chat", value: { messages, ...unused } } });
      assert.match(refused.error?.details ?? "", /^chat_template_kwargs\.enable_thinking: /);
    } finally {
      worker.close();
    }
    await assert.rejects(
      openai.chat.completions.create({
        model: "tiny-llama",
        messages,
        chat_template_kwargs: { enable_thinking: false },
      } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming),
      (err) =>
        err instanceof OpenAI.BadRequestError && /chat_template_kwargs\.enable_thinking/.test(err.message),
    );
  });

  it("returns log probabilities in each API's format", async () => {
    const completion = await openai.completions.create({
      model: "tiny-llama",
      prompt: "Hi",
      max_tokens: 4,
      temperature: 0,
      logprobs: 2,
      ignore_eos: true,
    } as OpenAI.Completions.CompletionCreateParamsNonStreaming);
    const lp = completion.choices[0]?.logprobs;
    assert.equal(lp?.tokens?.length, 4);
    assert.equal(lp?.token_logprobs?.length, 4);
    assert.ok(lp?.token_logprobs?.every((p) => p <= 0));
    assert.equal(Object.keys(lp?.top_logprobs?.[0] ?? {}).length > 0, true);
    const chat = await openai.chat.completions.create({
      model: "tiny-llama",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 3,
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
    });
    const content = chat.choices[0]?.logprobs?.content;
    assert.equal(content?.length, chat.usage?.completion_tokens);
    assert.equal(content?.[0]?.top_logprobs.length, 2);
    assert.equal(
      content?.[0]?.top_logprobs[0]?.logprob,
      content?.[0]?.logprob,
      "greedy picks the most likely token",
    );
  });

  it("honours vLLM's extra sampling fields in the body (extra_body in the Python client)", async () => {
    const vllm = {
      top_k: 1,
      min_p: 0.05,
      repetition_penalty: 1.1,
      ignore_eos: true,
      stop_token_ids: [],
      min_tokens: 0,
      skip_special_tokens: true,
    };
    const params = { model: "tiny-llama", prompt: "Hello", max_tokens: 12, temperature: 0.7, seed: 5 };
    const completion = await openai.completions.create({ ...params, ...vllm } as never);
    assert.equal(completion.usage?.completion_tokens, 12, "ignore_eos: max_tokens tokens");
    // top_k 1 is greedy whatever the temperature.
    const greedy = await openai.completions.create({ ...params, temperature: 0, ignore_eos: true } as never);
    const topK = await openai.completions.create({ ...params, seed: 6, ...vllm } as never);
    assert.equal(topK.choices[0]?.text, completion.choices[0]?.text);
    assert.equal(greedy.usage?.completion_tokens, 12);
  });

  it("honours min_tokens: the stop id greedy picks first is held back until min_tokens tokens came", async () => {
    const prompt = "Once upon a time";
    const first = await generate(grpc, {
      prompt: { case: "text", value: prompt },
      sampling: { maxTokens: 1, temperature: 0 },
    });
    const stopId = first.messages.flatMap((m) => m.tokens)[0]!.tokenId;
    const params = { model: "tiny-llama", prompt, max_tokens: 12, temperature: 0, stop_token_ids: [stopId] };
    const stopped = await openai.completions.create(params as never);
    assert.equal(stopped.usage?.completion_tokens, 1, "greedy's first token is the stop id");
    assert.equal(stopped.choices[0]?.finish_reason, "stop");
    const held = await openai.completions.create({ ...params, min_tokens: 6 } as never);
    assert.ok((held.usage?.completion_tokens ?? 0) >= 6, `${held.usage?.completion_tokens} tokens`);
    await assert.rejects(
      openai.completions.create({ ...params, min_tokens: 13 } as never),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.param, "min_tokens");
        return true;
      },
    );
  });

  it("raises the SDK's typed errors: 400 naming the parameter, 404 for an unknown model", async () => {
    await assert.rejects(
      openai.completions.create({ model: "tiny-llama", prompt: "x", temperature: 5 }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.param, "temperature");
        return true;
      },
    );
    // A parameter Tessera cannot honour is refused naming it (suffix: no fill-in-the-middle).
    await assert.rejects(
      openai.completions.create({ model: "tiny-llama", prompt: "x", suffix: "y" }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.param, "suffix");
        return true;
      },
    );
    await assert.rejects(openai.completions.create({ model: "gpt-9", prompt: "x" }), OpenAI.NotFoundError);
    // A field Tessera does not know is refused, naming it, rather than silently dropped.
    await assert.rejects(
      openai.completions.create({ model: "tiny-llama", prompt: "x", use_beam_search: true } as never),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.param, "use_beam_search");
        return true;
      },
    );
    await assert.rejects(
      openai.chat.completions.create({ model: "tiny-llama", messages: [] }),
      OpenAI.BadRequestError,
    );
  });
});

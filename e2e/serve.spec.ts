// `tessera serve` as a child process against a checkpoint made by `tessera model create`, called with
// a real grpc-js client: streaming, tokenization, health, reflection, bad inputs, cancellation, SIGTERM.
import assert from "node:assert/strict";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ClientReadableStream, ServiceError } from "@grpc/grpc-js";
import type { GenerateRequestSchema } from "../proto/gen/tessera/v1/inference_pb.js";
import {
  FinishReason,
  type GenerateResponse,
  Inference,
  type ModelInfo,
} from "../proto/gen/tessera/v1/inference_pb.js";
import { runTessera, type Served, startServe } from "../services/cli/child-process.ts";
import { Code } from "../services/kernel/errors.ts";
import { GrpcClient } from "../services/rpc/grpc-client.ts";
import { checkHealth, waitUntilServing } from "../services/rpc/health-client.ts";
import { tinyCheckpoint } from "./checkpoint.ts";
import { listServices } from "./reflection-client.ts";

type Request = MessageInitShape<typeof GenerateRequestSchema>;

interface Received {
  messages: GenerateResponse[];
  /** Milliseconds since the call started at which each message arrived. */
  arrivals: number[];
}

function receive(stream: ClientReadableStream<GenerateResponse>): Promise<Received> {
  const started = performance.now();
  const received: Received = { messages: [], arrivals: [] };
  stream.on("data", (message: GenerateResponse) => {
    received.messages.push(message);
    received.arrivals.push(performance.now() - started);
  });
  return new Promise((resolve, reject) => {
    stream.on("end", () => resolve(received));
    stream.on("error", reject);
  });
}

function failure(promise: Promise<unknown>): Promise<ServiceError> {
  return promise.then(
    () => assert.fail("expected the call to fail"),
    (err: ServiceError) => err,
  );
}

const textOf = (messages: GenerateResponse[]) => messages.map((m) => m.textDelta).join("");
const idsOf = (messages: GenerateResponse[]) => messages.flatMap((m) => m.tokens.map((t) => t.tokenId));

describe("tessera serve (e2e)", () => {
  let modelDir: string;
  let served: Served;
  let client: GrpcClient;
  let model: ModelInfo;

  before(async () => {
    modelDir = await tinyCheckpoint();
    served = await startServe(modelDir, ["--metrics-port", "0"]);
    await waitUntilServing(served.address, 30_000);
    client = new GrpcClient(served.address);
    const { models } = await client.unary(Inference.method.listModels, {});
    assert.equal(models.length, 1);
    model = models[0]!;
  });

  after(async () => {
    client?.close();
    served?.child.kill("SIGTERM");
    await served?.exited;
  });

  const generate = (request: Request) => receive(client.serverStream(Inference.method.generate, request));

  it("reports SERVING on grpc.health.v1 and exposes its services through reflection", async () => {
    assert.equal(await checkHealth(served.address), "SERVING");
    assert.equal(await checkHealth(served.address, "tessera.v1.Inference"), "SERVING");
    const services = await listServices(served.address);
    assert.ok(services.includes("tessera.v1.Inference"), services.join(", "));
    assert.ok(services.includes("grpc.health.v1.Health"), services.join(", "));
  });

  it("lists the model it serves", () => {
    assert.equal(model.id, "tiny-llama");
    assert.equal(model.architecture, "LlamaForCausalLM");
    assert.ok(model.maxContext > 16 && model.vocabSize > 0, JSON.stringify(model));
    assert.ok(["float32", "float16", "bfloat16"].includes(model.dtype));
  });

  it("tokenizes text into ids whose token texts spell the text", async () => {
    const text = "Hello world, this is Tessera.";
    const plain = await client.unary(Inference.method.tokenize, { text });
    assert.ok(plain.tokenIds.length > 1);
    assert.equal(plain.tokens.join(""), text);
    const special = await client.unary(Inference.method.tokenize, { text, addSpecialTokens: true });
    assert.ok(special.tokenIds.length >= plain.tokenIds.length);
  });

  it("streams a completion token by token; it matches `tessera generate --json` on the same checkpoint", async () => {
    const prompt = "Once upon a time";
    const maxTokens = 24;
    const { messages, arrivals } = await generate({
      prompt: { case: "text", value: prompt },
      sampling: { maxTokens, ignoreEos: true, logprobs: 2 },
      requestId: "e2e-stream",
    });
    assert.equal(messages.length, maxTokens + 1, "one message per token, then the finish message");
    assert.ok(
      messages
        .slice(0, -1)
        .every((m) => m.tokens.length === 1 && m.finishReason === FinishReason.UNSPECIFIED),
    );
    assert.ok(arrivals.at(-1)! > arrivals[0]!, "messages arrive over time, not all at once");
    assert.ok(messages.every((m) => m.requestId === "e2e-stream"));
    const top = messages[0]!.tokens[0]!.topLogprobs;
    assert.equal(top.length, 2);
    assert.equal(top[0]!.tokenId, messages[0]!.tokens[0]!.tokenId, "greedy picks the most likely token");
    const last = messages.at(-1)!;
    assert.equal(last.finishReason, FinishReason.LENGTH);
    assert.equal(last.usage?.completionTokens, maxTokens);
    assert.equal(last.usage?.totalTokens, (last.usage?.promptTokens ?? 0) + maxTokens);

    const cli = await runTessera([
      "generate",
      "--model",
      modelDir,
      "--prompt",
      prompt,
      "--max-tokens",
      String(maxTokens),
      "--ignore-eos",
      "--json",
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    const local = JSON.parse(cli.stdout) as { prompt_ids: number[]; output_ids: number[]; text: string };
    const tokenized = await client.unary(Inference.method.tokenize, { text: prompt, addSpecialTokens: true });
    assert.deepEqual(local.prompt_ids, tokenized.tokenIds);
    assert.equal(last.usage?.promptTokens, tokenized.tokenIds.length);
    assert.deepEqual(idsOf(messages), local.output_ids);
    assert.equal(textOf(messages), local.text);
  });

  it("continues a token-id prompt exactly as the same prompt given as text", async () => {
    const tokenized = await client.unary(Inference.method.tokenize, {
      text: "The quick brown fox",
      addSpecialTokens: true,
    });
    const sampling = { maxTokens: 8, ignoreEos: true };
    const byText = await generate({ prompt: { case: "text", value: "The quick brown fox" }, sampling });
    const byIds = await generate({
      prompt: { case: "tokenIds", value: { ids: tokenized.tokenIds } },
      sampling,
    });
    assert.deepEqual(idsOf(byIds.messages), idsOf(byText.messages));
  });

  it("rejects bad requests with INVALID_ARGUMENT naming the field while a good stream finishes beside them", async () => {
    const good = generate({
      prompt: { case: "text", value: "Keep going" },
      sampling: { maxTokens: 32, ignoreEos: true },
    });
    const text = (value: string) => ({ case: "text" as const, value });
    const bad: [Request, RegExp][] = [
      [{}, /^prompt: /],
      [{ prompt: text("") }, /^text: /],
      [{ prompt: { case: "tokenIds", value: { ids: [1, model.vocabSize] } } }, /^token_ids\[1\]: /],
      [
        { prompt: { case: "tokenIds", value: { ids: new Array(model.maxContext).fill(1) } } },
        /^prompt: .*context/,
      ],
      [{ prompt: text("hi"), sampling: { maxTokens: -5 } }, /^max_tokens: /],
      [{ prompt: text("hi"), sampling: { temperature: -0.5 } }, /^temperature: /],
      [{ prompt: text("hi"), sampling: { topP: 1.5 } }, /^top_p: /],
      [{ prompt: text("hi"), sampling: { logprobs: 21 } }, /^logprobs: /],
    ];
    const errors = await Promise.all(bad.map(([request]) => failure(generate(request))));
    errors.forEach((err, i) => {
      assert.equal(err.code, Code.INVALID_ARGUMENT, `${JSON.stringify(bad[i]![0])}: ${err.details}`);
      assert.match(err.details, bad[i]![1]);
    });
    const notFound = await failure(generate({ model: "no-such-model", prompt: text("hi") }));
    assert.equal(notFound.code, Code.NOT_FOUND);
    const { messages } = await good;
    assert.equal(messages.at(-1)?.finishReason, FinishReason.LENGTH);
    assert.equal(idsOf(messages).length, 32);
  });

  it("survives a client cancelling mid-stream and a deadline passing, and keeps serving", async () => {
    const stream = client.serverStream(Inference.method.generate, {
      prompt: { case: "text", value: "Cancel me" },
      sampling: { maxTokens: model.maxContext, ignoreEos: true },
    });
    const cancelled = new Promise<ServiceError>((resolve) => stream.on("error", resolve));
    await new Promise((resolve) => stream.once("data", resolve));
    stream.cancel();
    assert.equal((await cancelled).code, Code.CANCELLED);

    const late = await failure(
      receive(
        client.serverStream(
          Inference.method.generate,
          {
            prompt: { case: "text", value: "Too slow" },
            sampling: { maxTokens: model.maxContext, ignoreEos: true },
          },
          { deadline: Date.now() + 1 },
        ),
      ),
    );
    assert.equal(late.code, Code.DEADLINE_EXCEEDED);

    assert.equal(await checkHealth(served.address), "SERVING");
    const { messages } = await generate({
      prompt: { case: "text", value: "Still here" },
      sampling: { maxTokens: 4 },
    });
    assert.notEqual(messages.at(-1)?.finishReason, FinishReason.UNSPECIFIED);
  });

  it("exports call metrics in Prometheus text on --metrics-port", async () => {
    const port = served.logs.find((log) => log["msg"] === "metrics served at /metrics")?.["metricsPort"];
    assert.ok(typeof port === "number", "the server logged its metrics port");
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
    assert.ok(value(/^tessera_rpc_calls_total\{method="Generate",code="OK"\} (\d+)$/m) >= 3, text);
    assert.ok(
      value(/^tessera_rpc_calls_total\{method="Generate",code="INVALID_ARGUMENT"\} (\d+)$/m) >= 8,
      text,
    );
    assert.ok(value(/^tessera_rpc_generated_tokens_total (\d+)$/m) >= 24, text);
    assert.ok(value(/^tessera_rpc_time_to_first_token_seconds_count (\d+)$/m) >= 3, text);
  });

  it("exports the engine's metrics: latencies, queues, KV blocks, prefix cache, configuration", async () => {
    const port = served.logs.find((log) => log["msg"] === "metrics served at /metrics")?.["metricsPort"];
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const value = (name: string) =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, "m").exec(text)?.[1] ?? Number.NaN);
    for (const histogram of [
      "tessera_time_to_first_token_seconds",
      "tessera_inter_token_latency_seconds",
      "tessera_e2e_request_latency_seconds",
      "tessera_request_queue_time_seconds",
      "tessera_request_prefill_time_seconds",
      "tessera_request_decode_time_seconds",
    ]) {
      assert.ok(value(`${histogram}_count`) >= 3, `${histogram}_count\n${text}`);
    }
    assert.ok(value("tessera_kv_cache_total_blocks") > 0, text);
    assert.ok(value("tessera_kv_cache_used_blocks") >= 0, text);
    assert.ok(value("tessera_running_requests") >= 0 && value("tessera_waiting_requests") >= 0, text);
    assert.ok(value("tessera_prefix_cache_queries_total") >= value("tessera_prefix_cache_hits_total"), text);
    assert.ok(
      value("tessera_prompt_tokens_total") > 0 && value("tessera_generation_tokens_total") >= 24,
      text,
    );
    assert.match(
      text,
      /^tessera_engine_info\{[^}]*block_size="16"[^}]*attention_backend="(onnx-ops|ms-gqa|shared-prefix)"[^}]*\} 1$/m,
    );
  });
});

describe("tessera serve SIGTERM (e2e)", () => {
  it("drains: NOT_SERVING, new calls UNAVAILABLE, the stream in flight finishes, then exit 0", async () => {
    const served = await startServe(await tinyCheckpoint());
    await waitUntilServing(served.address, 30_000);
    const client = new GrpcClient(served.address);
    // Its own connection: the paused stream may hold the shared connection's flow-control window.
    const other = new GrpcClient(served.address, { "grpc.use_local_subchannel_pool": 1 });
    try {
      const { models } = await client.unary(Inference.method.listModels, {});
      const maxTokens = models[0]!.maxContext - 32;
      // 20 logprobs per token make each message big enough that a paused reader stalls the server
      // long before the last token: the call stays in flight until the client resumes reading.
      const stream = client.serverStream(Inference.method.generate, {
        prompt: { case: "text", value: "Drain" },
        sampling: { maxTokens, ignoreEos: true, logprobs: 20 },
      });
      const received = receive(stream);
      await new Promise((resolve) => stream.once("data", resolve));
      stream.pause();
      served.child.kill("SIGTERM");
      await until(() => served.logs.some((log) => log["msg"] === "draining"));
      assert.equal(served.logs.find((log) => log["msg"] === "draining")?.["inFlight"], 1);
      assert.equal(await checkHealth(served.address), "NOT_SERVING");
      const refused = await failure(other.unary(Inference.method.tokenize, { text: "late" }));
      assert.equal(refused.code, Code.UNAVAILABLE);
      assert.match(refused.details, /shutting down/);
      stream.resume();
      const { messages } = await received;
      assert.equal(messages.at(-1)?.finishReason, FinishReason.LENGTH);
      assert.equal(idsOf(messages).length, maxTokens);
      assert.equal(await served.exited, 0);
    } finally {
      client.close();
      other.close();
      served.child.kill("SIGKILL");
    }
  });
});

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// `tessera router` in front of three `tessera serve` workers, called with a real grpc-js client as a
// worker would be: the same answers, router-side tokenization, prefix and session affinity, the
// response cache, validation, deadlines and cancellation reaching the workers.
import assert from "node:assert/strict";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  FinishReason,
  GenerateRequestSchema,
  GenerateResponseSchema,
  Inference,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import { WorkerLoad } from "../../proto/gen/tessera/v1/load_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { Code } from "../../services/kernel/errors.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { checkHealth } from "../../services/rpc/health-client.ts";
import { requirePythonModules, runPythonJson } from "../python-client.ts";
import { listServices } from "../reflection-client.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "./fleet.ts";
import { generate, idsOf, textOf } from "./grpc-stream.ts";

const system =
  "You are Tessera's helpful assistant. Answer briefly, politely and precisely, in plain words. ".repeat(3);

describe("tessera router over gRPC (e2e)", () => {
  let workers: Served[];
  let router: RunningRouter;
  let client: GrpcClient;

  before(async () => {
    workers = await sharedWorkers();
    router = await startRouter(workers, { admission: { maxRequestBytes: 64 * 1024 } });
    client = new GrpcClient(router.grpcAddress);
  });

  after(async () => {
    client?.close();
    assert.equal(await router?.stop(), 0, "the router drains and exits 0");
  });

  it("serves tessera.v1.Inference with health and reflection, listing the workers' model and revision", async () => {
    assert.equal(await checkHealth(router.grpcAddress, "tessera.v1.Inference"), "SERVING");
    assert.ok((await listServices(router.grpcAddress)).includes("tessera.v1.Inference"));
    const [viaRouter] = (await client.unary(Inference.method.listModels, {})).models;
    const direct = new GrpcClient(workers[0]!.address);
    const [fromWorker] = (await direct.unary(Inference.method.listModels, {})).models;
    direct.close();
    assert.equal(viaRouter?.id, "tiny-llama");
    assert.equal(viaRouter?.revision, fromWorker?.revision);
    assert.ok(viaRouter?.revision);
    assert.equal(viaRouter?.maxContext, fromWorker?.maxContext);
  });

  it("streams the same tokens, text and usage as the worker, detokenized by the router", async () => {
    const request = {
      prompt: { case: "text" as const, value: "Once upon a time" },
      sampling: { maxTokens: 20, ignoreEos: true, logprobs: 2 },
    };
    const routed = await generate(client, { ...request, requestId: "via-router" });
    assert.ok(
      workers.some((w) => w.address === routed.endpoint),
      `endpoint ${routed.endpoint}`,
    );
    const direct = new GrpcClient(routed.endpoint!);
    const straight = await generate(direct, request);
    direct.close();
    assert.deepEqual(idsOf(routed), idsOf(straight));
    assert.equal(textOf(routed), textOf(straight));
    assert.equal(routed.messages.length, 21, "one message per token, then the finish");
    assert.ok(routed.messages.every((m) => m.requestId === "via-router"));
    assert.deepEqual(routed.messages.at(-1)?.usage, straight.messages.at(-1)?.usage);
    assert.equal(routed.messages.at(-1)?.finishReason, FinishReason.LENGTH);
    assert.equal(routed.messages[0]?.tokens[0]?.topLogprobs.length, 2);
    // server-timing: the worker's time on it (relayed by the router), and the router's, which holds it.
    const { worker, router: routerMs } = routed.timing;
    assert.ok(worker! > 0 && routerMs! > worker!, `server-timing ${JSON.stringify(routed.timing)}`);
    assert.deepEqual(Object.keys(straight.timing), ["worker"]);
    assert.ok(straight.timing["worker"]! > 0);
  });

  it("streams to Python grpcio the same messages, metadata and errors as to grpc-js", async () => {
    requirePythonModules("grpc");
    const request = {
      prompt: { case: "text" as const, value: "Once upon a time" },
      sampling: { maxTokens: 12, ignoreEos: true },
      requestId: "from-python",
    };
    const bad = { prompt: { case: "text" as const, value: "x" }, sampling: { temperature: -1 } };
    const bytes = (r: typeof request | typeof bad) =>
      Buffer.from(toBinary(GenerateRequestSchema, create(GenerateRequestSchema, r))).toString("base64");
    const { answers } = await runPythonJson<{
      answers: {
        messages: string[];
        code: string;
        details: string;
        headers: Record<string, string>;
        trailers: Record<string, string>;
      }[];
    }>(path.join(import.meta.dirname, "grpcio-generate.py"), {
      grpc_address: router.grpcAddress,
      calls: [{ request: bytes(request), metadata: { "x-session-id": "py" } }, { request: bytes(bad) }],
    });
    const [streamed, refused] = answers;
    const viaGrpcJs = await generate(client, request);
    const messages = streamed!.messages.map((m) =>
      fromBinary(GenerateResponseSchema, Buffer.from(m, "base64")),
    );
    assert.equal(streamed!.code, "OK");
    assert.deepEqual(
      messages.flatMap((m) => m.tokens.map((t) => t.tokenId)),
      idsOf(viaGrpcJs),
    );
    assert.equal(messages.length, 13, "one message per token, then the finish");
    assert.equal(messages.map((m) => m.textDelta).join(""), textOf(viaGrpcJs));
    assert.ok(messages.every((m) => m.requestId === "from-python"));
    assert.equal(messages.at(-1)?.finishReason, FinishReason.LENGTH);
    assert.ok(workers.some((w) => w.address === streamed!.headers["x-tessera-endpoint"]));
    assert.ok(streamed!.trailers["x-tessera-path"]);
    assert.match(streamed!.trailers["server-timing"] ?? "", /^worker;dur=[\d.]+, router;dur=[\d.]+$/);
    assert.equal(refused!.code, "INVALID_ARGUMENT");
    assert.match(refused!.details, /^temperature: /);
  });

  it("cuts stop strings exactly as the worker does", async () => {
    const probe = await generate(client, {
      prompt: { case: "text", value: "The quick brown fox" },
      sampling: { maxTokens: 24, ignoreEos: true },
    });
    const text = textOf(probe);
    const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 2);
    const request = {
      prompt: { case: "text" as const, value: "The quick brown fox" },
      sampling: { maxTokens: 24, ignoreEos: true, stop: [stop] },
    };
    const routed = await generate(client, request);
    const direct = new GrpcClient(workers[0]!.address);
    const straight = await generate(direct, request);
    direct.close();
    assert.equal(textOf(routed), textOf(straight));
    assert.equal(routed.messages.at(-1)?.finishReason, FinishReason.STOP_STRING);
  });

  it("tokenizes like the workers", async () => {
    const text = "Hello world, this is Tessera.";
    const viaRouter = await client.unary(Inference.method.tokenize, { text, addSpecialTokens: true });
    const direct = new GrpcClient(workers[1]!.address);
    const fromWorker = await direct.unary(Inference.method.tokenize, { text, addSpecialTokens: true });
    direct.close();
    assert.deepEqual(viaRouter.tokenIds, fromWorker.tokenIds);
    assert.deepEqual(viaRouter.tokens, fromWorker.tokens);
  });

  it("sends prompts that share a long prefix to one endpoint, and pins a session key", async () => {
    const endpoints = new Set<string | undefined>();
    for (const question of ["What is 2+2?", "Name a colour.", "Say hi.", "Count to three."]) {
      const routed = await generate(client, {
        prompt: { case: "text", value: `${system}${question}` },
        sampling: { maxTokens: 1, temperature: 0.5 },
      });
      endpoints.add(routed.endpoint);
    }
    assert.equal(endpoints.size, 1, [...endpoints].join(", "));
    const pinned = new Set<string | undefined>();
    for (const prompt of ["a", "completely different", "and another one"]) {
      const routed = await generate(
        client,
        { prompt: { case: "text", value: prompt }, sampling: { maxTokens: 1, temperature: 0.5 } },
        { "x-session-id": "chat-42" },
      );
      pinned.add(routed.endpoint);
    }
    assert.equal(pinned.size, 1);
  });

  it("answers a repeated greedy request from its cache", async () => {
    const request = {
      prompt: { case: "text" as const, value: "A cached answer" },
      sampling: { maxTokens: 6, ignoreEos: true },
    };
    const first = await generate(client, request);
    const second = await generate(client, request);
    assert.equal(first.cache, "miss");
    assert.equal(second.cache, "hit");
    assert.deepEqual(idsOf(second), idsOf(first));
    assert.equal(textOf(second), textOf(first));
  });

  it("refuses bad requests before any work, naming the field", async () => {
    const failure = async (request: Parameters<typeof generate>[1]) =>
      (await generate(client, request)).error;
    const hot = await failure({ prompt: { case: "text", value: "x" }, sampling: { temperature: -1 } });
    assert.equal(hot?.code, Code.INVALID_ARGUMENT);
    assert.match(hot?.details ?? "", /^temperature: /);
    const long = await failure({ prompt: { case: "tokenIds", value: { ids: new Array(600).fill(5) } } });
    assert.match(long?.details ?? "", /^prompt: 600 tokens do not fit the model's context of 512/);
    const many = await failure({ prompt: { case: "text", value: "x" }, sampling: { maxTokens: 100_000 } });
    assert.match(many?.details ?? "", /^max_tokens: must be <= 512/);
    const none = await failure({ sampling: { maxTokens: 1 } });
    assert.match(none?.details ?? "", /^prompt: /);
    const unknown = await failure({ model: "gpt-9", prompt: { case: "text", value: "x" } });
    assert.equal(unknown?.code, Code.NOT_FOUND);
    const huge = await failure({ prompt: { case: "text", value: "x".repeat(100 * 1024) } });
    assert.equal(huge?.code, Code.RESOURCE_EXHAUSTED, "a message over admission.maxRequestBytes");
  });

  it("passes the deadline to the worker, and a cancelled call frees the worker's request", async () => {
    const long = {
      prompt: { case: "text" as const, value: "Tell me everything" },
      sampling: { maxTokens: 450, ignoreEos: true, temperature: 1 },
    };
    const late = await generate(client, long, {}, 150);
    assert.equal(late.error?.code, Code.DEADLINE_EXCEEDED);
    const stream = client.serverStream(Inference.method.generate, long);
    stream.on("error", () => {});
    await new Promise((resolve) => stream.once("data", resolve));
    stream.cancel();
    await idle(workers);
  });
});

/** Waits until no worker has a call in flight (their WorkerLoad reports). */
async function idle(workers: readonly Served[]): Promise<void> {
  const clients = workers.map((w) => new GrpcClient(w.address));
  try {
    for (;;) {
      const loads = await Promise.all(clients.map((c) => c.unary(WorkerLoad.method.getLoad, {})));
      if (loads.every((l) => l.running === 0 && l.waiting === 0 && l.callsInFlight === 0)) return;
      await delay(20);
    }
  } finally {
    for (const c of clients) c.close();
  }
}

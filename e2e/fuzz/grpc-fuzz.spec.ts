// Property-based fuzzing of tessera.v1.Inference on a real `tessera router` and, directly, on a real
// worker (`tessera serve`, the tiny model): Generate with messages of the right shape and any field
// values, Tokenize and ListModels, and raw bytes as the payload of each. Never INTERNAL or UNKNOWN
// (nor any status a client could blame on the server), never a crash: a refusal is INVALID_ARGUMENT
// naming the field, or NOT_FOUND for a model not served; a good Generate beside the fuzz traffic,
// and one after each property, still completes. Fixed seed (fuzz-params.ts).
import assert from "node:assert/strict";
import { Client, credentials, status } from "@grpc/grpc-js";
import fc from "fast-check";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { grpcPath } from "../../services/rpc/grpc-service.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "../router/fleet.ts";
import { generate, textOf } from "../router/grpc-stream.ts";
import { assertProperty, fuzzParams } from "./fuzz-params.ts";
import { type CallResult, callRaw, type GenerateInit, generateRequest, rawPayload } from "./grpc-messages.ts";

/** Statuses that say the request was refused for what it asked, not that the server failed. */
const REFUSALS = [status.INVALID_ARGUMENT, status.NOT_FOUND, status.OUT_OF_RANGE, status.FAILED_PRECONDITION];

/** The fields of the Inference requests, as errors name them (snake_case; `request` for undecodable bytes). */
const FIELDS = new Set([
  "request",
  "model",
  "prompt",
  "text",
  "token_ids",
  "chat",
  "messages",
  "role",
  "content",
  "add_generation_prompt",
  "continue_final_message",
  "chat_template_kwargs",
  "chat_template",
  "sampling",
  "max_tokens",
  "temperature",
  "top_p",
  "top_k",
  "seed",
  "stop",
  "stop_token_ids",
  "ignore_eos",
  "logprobs",
  "min_p",
  "repetition_penalty",
  "presence_penalty",
  "frequency_penalty",
  "min_tokens",
  "request_id",
  "priority",
  "kv",
  "expected_remote_blocks",
  "await_writes",
]);

function assertAnswered(result: CallResult, context: unknown): void {
  const what = `${status[result.code]}: ${result.details} for ${fmt(context)}`;
  if (result.code === status.OK) return;
  assert.ok(REFUSALS.includes(result.code), what);
  if (result.code !== status.INVALID_ARGUMENT) return;
  const field = result.details.split(": ")[0] ?? "";
  const top = field.split(/[.[]/)[0] ?? "";
  assert.ok(FIELDS.has(top), `the error names no field: ${what}`);
}

function fmt(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)).slice(0, 600);
}

describe("fuzzing tessera.v1.Inference over gRPC, router and worker (e2e)", function () {
  this.timeout(120_000);
  let workers: Served[];
  let router: RunningRouter;
  const targets: { name: string; address: () => string }[] = [
    { name: "router", address: () => router.grpcAddress },
    { name: "worker", address: () => workers[0]!.address },
  ];

  before(async () => {
    workers = await sharedWorkers();
    router = await startRouter(workers);
  });
  after(async () => {
    await router?.stop();
  });

  for (const target of targets) {
    describe(`the ${target.name}`, () => {
      let typed: GrpcClient;
      let raw: Client;
      let good: { stop: () => Promise<number> };

      before(() => {
        typed = new GrpcClient(target.address());
        raw = new Client(target.address(), credentials.createInsecure());
      });
      beforeEach(() => {
        good = keepGenerating(target.address());
      });
      afterEach(async () => {
        // The good traffic beside the fuzz cases was served, and a request after them still is.
        assert.ok((await good.stop()) > 0);
        const after = await generate(typed, {
          prompt: { case: "text", value: "Hello" },
          sampling: { maxTokens: 3 },
        });
        assert.equal(after.error, undefined);
        assert.ok(textOf(after).length > 0);
        assert.equal(router.child.exitCode, null);
        for (const w of workers) assert.equal(w.child.exitCode, null);
      });
      after(() => {
        typed?.close();
        raw?.close();
      });

      it("answers random Generate messages with OK or a refusal naming the field", async () => {
        await assertProperty(
          fc.asyncProperty(generateRequest, async (request: GenerateInit) => {
            const streamed = await generate(typed, request, {}, 60_000);
            const result = {
              code: streamed.error?.code ?? status.OK,
              details: streamed.error?.details ?? "",
              messages: streamed.messages.length,
            };
            assertAnswered(result, request);
            if (result.code === status.OK) assert.ok(streamed.messages.at(-1)?.usage, fmt(request));
          }),
          // Found by fuzzing: a 200,000-character model name came back in a status trailer too large
          // for the client's HTTP/2 session, which failed the other calls on the connection too.
          fuzzParams<[GenerateInit]>(120, [
            [{ model: "é".repeat(200_000), prompt: { case: "text", value: "Hi" } }],
          ]),
        );
      });

      it("answers random Tokenize and ListModels messages", async () => {
        const tokenize = fc.record({
          model: fc.oneof(fc.constantFrom("", "tiny-llama"), fc.string()),
          text: fc.string({ unit: "binary", maxLength: 2_000 }),
          addSpecialTokens: fc.boolean(),
        });
        await assertProperty(
          fc.asyncProperty(tokenize, async (request) => {
            const result = await typed.unary(Inference.method.tokenize, request).then(
              () => ({ code: status.OK, details: "", messages: 1 }),
              (err: { code: number; details: string }) => ({
                code: err.code,
                details: err.details,
                messages: 0,
              }),
            );
            assertAnswered(result, request);
          }),
          fuzzParams(40),
        );
        assert.ok((await typed.unary(Inference.method.listModels, {})).models.length > 0);
      });

      it("refuses payloads that are not the method's message with INVALID_ARGUMENT naming `request`", async () => {
        const methods = fc.constantFrom(
          { path: grpcPath(Inference.method.generate), streaming: true },
          { path: grpcPath(Inference.method.tokenize), streaming: false },
          { path: grpcPath(Inference.method.listModels), streaming: false },
        );
        // Found by fuzzing: grpc-js answered INTERNAL when a request did not decode.
        const examples: [{ path: string; streaming: boolean }, Uint8Array][] = [
          [{ path: grpcPath(Inference.method.generate), streaming: true }, Uint8Array.of(0xff, 0xff)],
          [
            { path: grpcPath(Inference.method.tokenize), streaming: false },
            Uint8Array.of(0x12, 0x02, 0xc3, 0x28),
          ],
        ];
        await assertProperty(
          fc.asyncProperty(methods, rawPayload, async (method, payload) => {
            const result = await callRaw(raw, method.path, payload, method.streaming);
            assertAnswered(result, { path: method.path, payload: Buffer.from(payload).toString("hex") });
          }),
          fuzzParams(120, examples),
        );
      });
    });
  }
});

/** Generates a short completion over and over until stopped; each must complete. */
function keepGenerating(address: string): { stop: () => Promise<number> } {
  const client = new GrpcClient(address);
  let running = true;
  const loop = (async () => {
    let served = 0;
    while (running) {
      const streamed = await generate(client, {
        prompt: { case: "text", value: "Once upon a time" },
        sampling: { maxTokens: 4 },
      });
      assert.equal(streamed.error, undefined, streamed.error?.details);
      served++;
    }
    return served;
  })().finally(() => client.close());
  loop.catch(() => {}); // reported by stop()
  return {
    stop: () => {
      running = false;
      return loop;
    },
  };
}

// Admission at the router's front doors: API keys from a file with per-key rate limits, and the
// bounded queue that sheds load with a retry hint (HTTP 429 + Retry-After, gRPC RESOURCE_EXHAUSTED +
// grpc-retry-pushback-ms).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { Code } from "../../services/kernel/errors.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "./fleet.ts";
import { generate } from "./grpc-stream.ts";

describe("tessera router admission (e2e)", () => {
  let workers: Served[];
  before(async () => {
    workers = await sharedWorkers();
  });

  describe("with API keys", () => {
    let router: RunningRouter;
    before(async () => {
      const keys = path.join(mkdtempSync(path.join(os.tmpdir(), "tessera-keys-")), "keys.yaml");
      writeFileSync(
        keys,
        "keys:\n  - { name: alice, key: sk-alice-0001, requestsPerSecond: 0.01, burstRequests: 2 }\n  - { name: bob, key: sk-bob-00001 }\n",
      );
      router = await startRouter(workers, { admission: { apiKeysFile: keys } });
    });
    after(async () => {
      await router?.stop();
    });

    const client = (apiKey: string) => new OpenAI({ baseURL: `${router.httpUrl}/v1`, apiKey, maxRetries: 0 });
    const ask = (apiKey: string) =>
      client(apiKey).completions.create({ model: "tiny-llama", prompt: "Hi", max_tokens: 1 });

    it("refuses a missing or unknown key with 401 (gRPC: UNAUTHENTICATED)", async () => {
      await assert.rejects(ask("sk-mallory-01"), OpenAI.AuthenticationError);
      assert.equal((await fetch(`${router.httpUrl}/v1/models`)).status, 401, "no key at all");
      const grpc = new GrpcClient(router.grpcAddress);
      const refused = await generate(grpc, {
        prompt: { case: "text", value: "Hi" },
        sampling: { maxTokens: 1 },
      });
      const allowed = await generate(
        grpc,
        { prompt: { case: "text", value: "Hi" }, sampling: { maxTokens: 1 } },
        { authorization: "Bearer sk-bob-00001" },
      );
      grpc.close();
      assert.equal(refused.error?.code, Code.UNAUTHENTICATED);
      assert.equal(allowed.error, undefined);
    });

    it("limits each key to its rate: 429 with a retry hint past the burst, other keys unaffected", async () => {
      await ask("sk-alice-0001");
      await ask("sk-alice-0001");
      await assert.rejects(ask("sk-alice-0001"), (err: unknown) => {
        assert.ok(err instanceof OpenAI.RateLimitError);
        assert.ok(Number(err.headers?.get("retry-after")) >= 1);
        assert.ok(Number(err.headers?.get("retry-after-ms")) > 0);
        return true;
      });
      await ask("sk-bob-00001");
    });
  });

  describe("with a full queue", () => {
    let router: RunningRouter;
    before(async () => {
      router = await startRouter(workers.slice(0, 1), {
        admission: { maxInFlightPerEndpoint: 1, maxQueue: 0, retryAfterMs: 700 },
        cache: { enabled: false },
      });
    });
    after(async () => {
      await router?.stop();
    });

    it("refuses requests beyond the running ones and the queue, over both front doors", async () => {
      const grpc = new GrpcClient(router.grpcAddress);
      const holder = grpc.serverStream(Inference.method.generate, {
        prompt: { case: "text", value: "Keep going" },
        sampling: { maxTokens: 450, ignoreEos: true },
      });
      holder.on("error", () => {});
      await new Promise((resolve) => holder.once("data", resolve));
      const openai = new OpenAI({ baseURL: `${router.httpUrl}/v1`, apiKey: "none", maxRetries: 0 });
      await assert.rejects(
        openai.completions.create({ model: "tiny-llama", prompt: "Me too", max_tokens: 1 }),
        (err: unknown) => {
          assert.ok(err instanceof OpenAI.RateLimitError);
          assert.equal(err.headers?.get("retry-after-ms"), "700");
          return true;
        },
      );
      const refused = await generate(grpc, {
        prompt: { case: "text", value: "Me too" },
        sampling: { maxTokens: 1 },
      });
      assert.equal(refused.error?.code, Code.RESOURCE_EXHAUSTED);
      assert.equal(refused.error?.metadata.get("grpc-retry-pushback-ms")[0], "700");
      holder.cancel();
      grpc.close();
    });
  });
});

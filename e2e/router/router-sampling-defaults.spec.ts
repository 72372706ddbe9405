// A checkpoint's generation_config.json sampling defaults end to end: `tessera serve` reads them and logs
// them, the router learns them from the worker, lists them on /v1/models and applies them to an OpenAI
// request that leaves temperature out (not OpenAI's 1, not greedy); temperature 0 stays greedy; and
// `tessera serve --generation-config none` leaves them unused.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import { type RunningRouter, startRouter, stopAll } from "./fleet.ts";
import { generate } from "./grpc-stream.ts";

/** The most the OpenAI door takes, so a request can name it too; far from greedy on a random model. */
const TEMPERATURE = 2;
const PROMPT = "Once upon a time";

describe("sampling defaults from generation_config.json through the router (e2e)", () => {
  let dir: string;
  let worker: Served;
  let router: RunningRouter;
  let openai: OpenAI;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-gen-defaults-"));
    const modelDir = path.join(dir, "tiny-llama");
    cpSync(await tinyCheckpoint(), modelDir, { recursive: true });
    writeFileSync(
      path.join(modelDir, "generation_config.json"),
      JSON.stringify({
        bos_token_id: 1,
        do_sample: true,
        eos_token_id: 2,
        temperature: TEMPERATURE,
        top_k: 0,
      }),
    );
    worker = await startServe(modelDir);
    await waitUntilServing(worker.address, 60_000);
    router = await startRouter([worker], { models: [{ id: "tiny-llama", tokenizer: modelDir }] });
    openai = new OpenAI({ baseURL: `${router.httpUrl}/v1`, apiKey: "none", maxRetries: 0 });
  });

  after(async () => {
    await router?.stop();
    if (worker) await stopAll([worker]);
    rmSync(dir, { recursive: true, force: true });
  });

  const complete = async (sampling: Record<string, unknown>) => {
    const params = { model: "tiny-llama", prompt: PROMPT, max_tokens: 12, ignore_eos: true, seed: 7 };
    const completion = await openai.completions.create({ ...params, ...sampling });
    return completion.choices[0]?.text ?? "";
  };

  it("logs the defaults at start-up and lists them on /v1/models", async () => {
    const startup = worker.logs.find((l) => l["samplingDefaults"] !== undefined);
    assert.deepEqual(startup?.["samplingDefaults"], { temperature: TEMPERATURE, top_k: 0 });
    const card = (await openai.models.retrieve("tiny-llama")) as unknown as Record<string, unknown>;
    assert.deepEqual(card["sampling_defaults"], { temperature: TEMPERATURE, top_k: 0 });
  });

  it("samples an OpenAI request without temperature at the checkpoint's, and temperature 0 greedily", async () => {
    const unset = await complete({});
    assert.equal(unset, await complete({ temperature: TEMPERATURE }), "the same seed and temperature");
    assert.notEqual(unset, await complete({ temperature: 1 }), "not OpenAI's default of 1");
    const greedy = await complete({ temperature: 0 });
    assert.equal(greedy, await complete({ temperature: 0, seed: 8 }), "greedy: the seed does not matter");
    assert.notEqual(unset, greedy);
    // The router's gRPC door leaves the field unset the same way.
    const grpc = new GrpcClient(router.grpcAddress);
    try {
      const viaGrpc = await generate(grpc, {
        prompt: { case: "text", value: PROMPT },
        sampling: { maxTokens: 12, ignoreEos: true, seed: 7n },
      });
      assert.equal(viaGrpc.messages.map((m) => m.textDelta).join(""), unset);
    } finally {
      grpc.close();
    }
  });

  it("leaves the defaults unused under tessera serve --generation-config none", async () => {
    const greedy = await complete({ temperature: 0 });
    const off = await startServe(path.join(dir, "tiny-llama"), ["--generation-config", "none"]);
    try {
      await waitUntilServing(off.address, 60_000);
      const startup = off.logs.find((l) => l["samplingDefaults"] !== undefined);
      assert.deepEqual(startup?.["ignored"], { temperature: TEMPERATURE, top_k: 0 });
      const client = new GrpcClient(off.address);
      try {
        const unset = await generate(client, {
          prompt: { case: "text", value: PROMPT },
          sampling: { maxTokens: 12, ignoreEos: true, seed: 7n },
        });
        assert.equal(unset.messages.map((m) => m.textDelta).join(""), greedy);
      } finally {
        client.close();
      }
    } finally {
      await stopAll([off]);
    }
  });
});

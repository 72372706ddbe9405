// `tessera serve --quantization int4` (and int8, per channel by default) as a child process on the trained reference Llama
// (devtools/reference/trained-llama): it serves and generates the greedy tokens the engine computes
// in-process with int4 blocks of 128, symmetric (so the flag reached the model thread with the defaults
// it documents), logs what it quantized and keeps fewer weight bytes than the checkpoint holds.
// Values it cannot honour stop it before it loads anything, naming the flag. (The quality of the
// quantized models is measured by `npm run bench -- quality`, not here.)
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { type GenerateResponse, Inference } from "../proto/gen/tessera/v1/inference_pb.js";
import { runTessera, type Served, startServe } from "../services/cli/child-process.ts";
import { greedySampling } from "../services/inference/sampling-params.ts";
import { GrpcClient } from "../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../services/rpc/health-client.ts";
import { Engine } from "../services/worker/engine/engine.ts";
import { TRAINED_LLAMA_DIR, trainedLlamaReference } from "../services/worker/testdata/trained-llama.ts";

const reference = trainedLlamaReference();
const TOKENS = 24;

/** A greedy generation's token ids and their logprobs. */
interface Generation {
  ids: number[];
  logprobs: number[];
}

/** The reference prompt's greedy tokens and logprobs from a served model over gRPC. */
async function servedGreedy(client: GrpcClient): Promise<Generation> {
  const out: Generation = { ids: [], logprobs: [] };
  const stream = client.serverStream(Inference.method.generate, {
    prompt: { case: "tokenIds", value: { ids: reference.prompt_ids } },
    sampling: { maxTokens: TOKENS, ignoreEos: true, temperature: 0 },
  });
  for await (const m of stream as AsyncIterable<GenerateResponse>)
    for (const t of m.tokens) {
      out.ids.push(t.tokenId);
      out.logprobs.push(t.logprob);
    }
  return out;
}

/** The same greedy generation by an engine in this process (onnx-ops attention, as the server's). */
async function inProcess(options: Parameters<typeof Engine.load>[1]): Promise<Generation> {
  const engine = await Engine.load(TRAINED_LLAMA_DIR, { ...options, engine: { attention: "onnx-ops" } });
  const out: Generation = { ids: [], logprobs: [] };
  try {
    const sampling = greedySampling({ maxTokens: TOKENS, ignoreEos: true });
    for await (const e of engine.generate({ requestId: "q", promptIds: reference.prompt_ids, sampling }))
      if (e.type === "tokens")
        for (const t of e.tokens) {
          out.ids.push(t.tokenId);
          out.logprobs.push(t.logprob);
        }
  } finally {
    await engine.close();
  }
  return out;
}

/**
 * `tessera serve --quantization <mode>` on the trained model for the enclosing describe, with its
 * client. The attention backend is pinned here and in inProcess: "auto" races the backends at load
 * and keeps the fastest, and backends agree to 1e-3, not to these tests' 1e-4 (a loaded CI host
 * picked another).
 */
function servedWith(mode: "int4" | "int8"): { served: Served; client: GrpcClient } {
  const server = {} as { served: Served; client: GrpcClient };
  before(async () => {
    const args = ["--quantization", mode, "--threads", "1", "--attention", "onnx-ops"];
    server.served = await startServe(TRAINED_LLAMA_DIR, args);
    await waitUntilServing(server.served.address, 60_000);
    server.client = new GrpcClient(server.served.address);
  });
  after(async () => {
    server.client?.close();
    server.served?.child.kill("SIGTERM");
    await server.served?.exited;
  });
  return server;
}

/** The served greedy tokens are the in-process engine's, their logprobs within 1e-4. */
function assertSameGeneration(served: Generation, engine: Generation): void {
  assert.deepEqual(served.ids, engine.ids);
  for (const [i, lp] of served.logprobs.entries())
    assert.ok(Math.abs(lp - engine.logprobs[i]!) < 1e-4, `token ${i}`);
}

/** The largest |served - other| over the served logprobs. */
const largestChange = (served: number[], other: number[]) =>
  Math.max(...served.map((lp, i) => Math.abs(lp - other[i]!)));

describe("tessera serve --quantization (e2e)", () => {
  const server = servedWith("int4");

  it("generates the engine's int4 greedy tokens (blocks of 128, symmetric), whose logprobs are not float32's", async () => {
    const generated = await servedGreedy(server.client);
    assert.equal(generated.ids.length, TOKENS);

    const int4 = await inProcess({ threads: 1, quantization: { bits: 4, blockSize: 128, symmetric: true } });
    assertSameGeneration(generated, int4);
    // The process did quantize: float32's logprobs (the trained model's greedy ids may well be the
    // same ones) are not these.
    const float = await inProcess({ threads: 1 });
    const moved = largestChange(generated.logprobs, float.logprobs);
    assert.ok(moved > 1e-3, `largest logprob change from float32 ${moved}`);
  });

  it("reports a revision naming the quantization, so router caches never mix it with float answers", async () => {
    const { models } = await server.client.unary(Inference.method.listModels, {});
    assert.match(models[0]?.revision ?? "", /\+int4-b128-sym$/);
  });

  it("logs what it quantized and its weight memory, below the checkpoint's float16 bytes", () => {
    const loaded = server.served.logs.find((l) => l["msg"] === "model loaded");
    assert.ok(loaded, JSON.stringify(server.served.logs));
    assert.equal(loaded["quantization"], "int4 block 128 symmetric");
    const checkpointMiB = fs.statSync(path.join(TRAINED_LLAMA_DIR, "model.safetensors")).size / 2 ** 20;
    const weightMiB = Number(loaded["weightBytes"]) / 2 ** 20;
    // The matrices and the tied embedding (read from the lm_head's codes) at 4.25 bits a weight (4 + a
    // float32 scale per 128) against the checkpoint's 16: about a quarter of its bytes, norms aside.
    assert.ok(weightMiB > 0 && weightMiB < 0.7 * checkpointMiB, `${weightMiB} of ${checkpointMiB} MiB`);
  });
});

describe("tessera serve --quantization int8 (e2e)", () => {
  const server = servedWith("int8");

  it("quantizes per channel by default: the engine's per-channel int8 tokens, not block-wise int8's", async () => {
    const generated = await servedGreedy(server.client);
    assert.equal(generated.ids.length, TOKENS);
    const channel = await inProcess({
      threads: 1,
      quantization: { bits: 8, blockSize: "channel", symmetric: true },
    });
    assertSameGeneration(generated, channel);
    // Blocks of 128 (MatMulNBits, int8 activations per block) give other logprobs: the default did
    // reach the model thread as per channel.
    const blocks = await inProcess({
      threads: 1,
      quantization: { bits: 8, blockSize: 128, symmetric: true },
    });
    const moved = largestChange(generated.logprobs, blocks.logprobs);
    assert.ok(moved > 1e-4, `largest logprob change from blocks of 128 ${moved}`);
  });

  it("names it in its revision and its start-up log, at about half the float16 checkpoint's bytes", async () => {
    const { models } = await server.client.unary(Inference.method.listModels, {});
    assert.match(models[0]?.revision ?? "", /\+int8-channel-sym$/);
    const loaded = server.served.logs.find((l) => l["msg"] === "model loaded");
    assert.equal(loaded?.["quantization"], "int8 per channel symmetric");
    const checkpointMiB = fs.statSync(path.join(TRAINED_LLAMA_DIR, "model.safetensors")).size / 2 ** 20;
    const weightMiB = Number(loaded?.["weightBytes"]) / 2 ** 20;
    // One byte a weight and a float32 scale per row against the checkpoint's two bytes.
    assert.ok(weightMiB > 0 && weightMiB < 0.6 * checkpointMiB, `${weightMiB} of ${checkpointMiB} MiB`);
  });
});

describe("tessera serve refuses quantization it cannot apply (e2e)", () => {
  const serve = (args: string[]) =>
    runTessera(["serve", "--model", TRAINED_LLAMA_DIR, "--port", "0", ...args]);

  it("an unknown mode, naming --quantization and the choices", async () => {
    const run = await serve(["--quantization", "int3"]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--quantization.*'int3'.*Allowed choices are none, int8, int4/);
  });

  it("a block size MatMulNBits cannot take, naming --quantization-block-size", async () => {
    const run = await serve(["--quantization", "int4", "--quantization-block-size", "24"]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--quantization-block-size: 24 must be a power of two, at least 16/);
  });

  it("per-channel blocks at int4, naming --quantization-block-size", async () => {
    const run = await serve(["--quantization", "int4", "--quantization-block-size", "channel"]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--quantization-block-size: channel applies to int8 only/);
  });

  it("a block size without a quantization, rather than ignoring it", async () => {
    const run = await serve(["--quantization-block-size", "64"]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--quantization-block-size: applies only to a quantized model/);
  });
});

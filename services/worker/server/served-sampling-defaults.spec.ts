// A checkpoint's generation_config.json sampling defaults, through the worker's gRPC server as
// `tessera serve` assembles it: a request that leaves temperature unset samples as the checkpoint says, an
// explicit temperature 0 is greedy regardless, and `--generation-config none` turns the defaults off.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import { type GenerateResponse, Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { GrpcClient } from "../../rpc/grpc-client.ts";
import { Engine } from "../engine/engine.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { InferenceServer } from "./inference-server.ts";
import { type GenerationConfigMode, servedSamplingDefaults } from "./served-sampling-defaults.ts";

const PROMPT = [5, 17, 42, 99, 100, 7];
/** So high that a sampled token is close to uniform over the vocabulary: nothing like greedy. */
const RECOMMENDED_TEMPERATURE = 50;

function logSink() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

async function generatedIds(client: GrpcClient, sampling: Record<string, unknown>): Promise<number[]> {
  const ids: number[] = [];
  const stream = client.serverStream(Inference.method.generate, {
    prompt: { case: "tokenIds", value: { ids: PROMPT } },
    sampling: { maxTokens: 12, ignoreEos: true, seed: 7n, ...sampling },
  });
  await new Promise<void>((resolve, reject) => {
    stream.on("data", (m: GenerateResponse) => ids.push(...m.tokens.map((t) => t.tokenId)));
    stream.on("end", resolve);
    stream.on("error", reject);
  });
  return ids;
}

describe("sampling defaults from generation_config.json (worker gRPC server)", () => {
  let dir: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-gen-defaults-"));
    await createCheckpoint({ arch: "llama", preset: "tiny", seed: 5, out: dir });
    const generationConfig = {
      bos_token_id: 1,
      do_sample: true,
      eos_token_id: [2],
      max_new_tokens: 256,
      temperature: RECOMMENDED_TEMPERATURE,
      top_p: 1.0,
    };
    fs.writeFileSync(path.join(dir, "generation_config.json"), JSON.stringify(generationConfig));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Serves the checkpoint as `tessera serve --generation-config <mode>` does. */
  async function withServer(
    mode: GenerationConfigMode,
    fn: (client: GrpcClient, startup: Record<string, unknown>) => Promise<void>,
  ): Promise<void> {
    const { log, lines } = logSink();
    const checkpoint = describeCheckpoint(dir);
    const samplingDefaults = servedSamplingDefaults(checkpoint, mode, log);
    const engine = await Engine.load(dir, { threads: 1 });
    const server = await InferenceServer.start(engine, {
      host: "127.0.0.1",
      port: 0,
      drainTimeoutMs: 1_000,
      log: pino({ level: "silent" }),
      modelInfo: {
        revision: checkpoint.revision,
        kvBlockSize: engine.config.blockSize,
        eosTokenIds: engine.eosTokenIds,
        samplingDefaults,
      },
    });
    const client = new GrpcClient(`127.0.0.1:${server.port}`);
    try {
      assert.equal(lines.length, 1, "one start-up line says which defaults apply");
      await fn(client, lines[0]!);
    } finally {
      client.close();
      await server.shutdown();
      await engine.close();
    }
  }

  it("applies the checkpoint's temperature to a request without one; temperature 0 stays greedy", async () => {
    await withServer("auto", async (client, startup) => {
      assert.deepEqual(startup["samplingDefaults"], { temperature: RECOMMENDED_TEMPERATURE, top_p: 1 });
      assert.deepEqual(startup["notApplied"], ["max_new_tokens 256 (the default max_tokens stays 16)"]);
      const listed = await client.unary(Inference.method.listModels, {});
      assert.equal(listed.models[0]?.samplingDefaults?.temperature, RECOMMENDED_TEMPERATURE);

      const unset = await generatedIds(client, {});
      const explicit = await generatedIds(client, { temperature: RECOMMENDED_TEMPERATURE });
      const greedy = await generatedIds(client, { temperature: 0 });
      const greedyOtherSeed = await generatedIds(client, { temperature: 0, seed: 8n });
      assert.deepEqual(unset, explicit, "unset = the checkpoint's temperature, same seed, same tokens");
      assert.deepEqual(greedy, greedyOtherSeed, "temperature 0 is greedy: the seed does not matter");
      assert.notDeepEqual(unset, greedy);
    });
  });

  it("with --generation-config none, a request without temperature is greedy", async () => {
    let greedyAuto: number[] = [];
    await withServer("auto", async (client) => {
      greedyAuto = await generatedIds(client, { temperature: 0 });
    });
    await withServer("none", async (client, startup) => {
      assert.deepEqual(startup["samplingDefaults"], {});
      assert.deepEqual(startup["ignored"], { temperature: RECOMMENDED_TEMPERATURE, top_p: 1 });
      const listed = await client.unary(Inference.method.listModels, {});
      assert.equal(listed.models[0]?.samplingDefaults?.temperature, undefined);
      assert.deepEqual(await generatedIds(client, {}), greedyAuto);
    });
  });
});

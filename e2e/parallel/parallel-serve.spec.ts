// Parallel replicas as `tessera serve` processes over real gRPC: PP=2, TP=2 and TP=2 × PP=2 groups of
// every reference architecture (Llama, Mistral, Qwen2 with q/k/v bias and tied embeddings, Mixtral
// with experts) generate the same greedy ids as the single-process engine, with the top-20 logprobs
// of every token within 1e-4, and the same ids for a seeded sampled request (the last stage samples,
// with the draw rank 0 keys by the request's seed and the token's position). Rank 0 is the one
// endpoint: the other members serve only the internal ShardLink and grpc.health.v1.
import assert from "node:assert/strict";
import path from "node:path";
import type { ServiceError } from "@grpc/grpc-js";
import { type GenerateResponse, Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { greedySampling } from "../../services/inference/sampling-params.ts";
import type { GeneratedToken, SamplingParams } from "../../services/inference/types.ts";
import { Code } from "../../services/kernel/errors.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { checkHealth } from "../../services/rpc/health-client.ts";
import { Engine } from "../../services/worker/engine/engine.ts";
import { REFERENCE_DIR, REFERENCE_MODELS, referenceCases } from "../../services/worker/testdata/reference.ts";
import { type Group, startGroup } from "./group.ts";

const ENGINE_ARGS = ["--threads", "1", "--attention", "onnx-ops", "--micro-batches", "2"];
const LAYOUTS = [
  { name: "PP=2", stages: 2, tensorSize: 1 },
  { name: "TP=2", stages: 1, tensorSize: 2 },
  { name: "TP=2 x PP=2", stages: 2, tensorSize: 2 },
];
const GREEDY: SamplingParams = greedySampling({ maxTokens: 12, ignoreEos: true, logprobs: 20 });
const SAMPLED: SamplingParams = greedySampling({
  maxTokens: 12,
  ignoreEos: true,
  temperature: 0.9,
  topP: 0.9,
  seed: 20261127n,
});

type Tokens = Pick<GeneratedToken, "tokenId" | "logprob" | "top">[];

/** The single-process engine's tokens for each reference prompt of `model`, greedy and SAMPLED. */
async function singleProcess(
  modelDir: string,
  prompts: number[][],
): Promise<{ greedy: Tokens[]; sampled: Tokens[] }> {
  const engine = await Engine.load(modelDir, { engine: { attention: "onnx-ops" }, threads: 1 });
  const run = (sampling: SamplingParams) =>
    Promise.all(
      prompts.map(async (promptIds, i) => {
        const tokens: Tokens = [];
        for await (const e of engine.generate({ requestId: `single-${i}`, promptIds, sampling }))
          if (e.type === "tokens") tokens.push(...e.tokens);
        return tokens;
      }),
    );
  try {
    return { greedy: await run(GREEDY), sampled: await run(SAMPLED) };
  } finally {
    await engine.close();
  }
}

function viaGroup(client: GrpcClient, promptIds: number[], sampling = GREEDY): Promise<Tokens> {
  const { maxTokens, logprobs, temperature, topP, seed } = sampling;
  const stream = client.serverStream(Inference.method.generate, {
    prompt: { case: "tokenIds", value: { ids: promptIds } },
    sampling: {
      maxTokens,
      ignoreEos: true,
      logprobs,
      temperature,
      topP,
      ...(seed !== undefined && { seed }),
    },
  });
  const tokens: Tokens = [];
  return new Promise((resolve, reject) => {
    stream.on("data", (m: GenerateResponse) =>
      tokens.push(
        ...m.tokens.map((t) => ({
          tokenId: t.tokenId,
          logprob: t.logprob,
          top: t.topLogprobs.map((a) => ({ tokenId: a.tokenId, logprob: a.logprob })),
        })),
      ),
    );
    stream.on("end", () => resolve(tokens));
    stream.on("error", reject);
  });
}

for (const model of REFERENCE_MODELS)
  describe(`parallel replicas of ${model} (e2e)`, () => {
    const modelDir = path.join(REFERENCE_DIR, model);
    const prompts = referenceCases(model).map((c) => c.prompt_ids);
    let expected: Tokens[];
    let expectedSampled: Tokens[];
    before(async () => {
      ({ greedy: expected, sampled: expectedSampled } = await singleProcess(modelDir, prompts));
    });

    for (const layout of LAYOUTS)
      describe(layout.name, () => {
        let group: Group;
        let client: GrpcClient;
        before(async () => {
          group = await startGroup(modelDir, layout, ENGINE_ARGS);
          client = new GrpcClient(group.coordinator.address);
        });
        after(async () => {
          client?.close();
          await group?.stop();
        });

        it("generates the single process's greedy ids with logprobs within 1e-4", async () => {
          const got = await Promise.all(prompts.map((p) => viaGroup(client, p)));
          for (const [i, tokens] of got.entries()) {
            const want = expected[i]!;
            assert.deepEqual(
              tokens.map((t) => t.tokenId),
              want.map((t) => t.tokenId),
              `prompt ${i}`,
            );
            for (const [s, t] of tokens.entries()) {
              const w = want[s]!;
              assert.ok(Math.abs(t.logprob - w.logprob) <= 1e-4, `prompt ${i} token ${s}`);
              assert.deepEqual(
                t.top.map((a) => a.tokenId),
                w.top.map((a) => a.tokenId),
              );
              for (const [k, a] of t.top.entries())
                assert.ok(Math.abs(a.logprob - w.top[k]!.logprob) <= 1e-4, `prompt ${i} token ${s} top ${k}`);
            }
          }
        });

        it("samples the single process's ids for a seeded request (temperature 0.9, top_p 0.9)", async () => {
          const got = await Promise.all(prompts.map((p) => viaGroup(client, p, SAMPLED)));
          const ids = (tokens: Tokens[]) => tokens.map((t) => t.map((x) => x.tokenId));
          assert.ok(
            ids(expectedSampled).some((t) => new Set(t).size > 6),
            `sampled, not greedy loops: ${ids(expectedSampled)}`,
          );
          assert.deepEqual(ids(got), ids(expectedSampled));
        });

        if (layout.stages * layout.tensorSize === 4)
          it("is one endpoint: only rank 0 serves tessera.v1.Inference, every member reports SERVING", async () => {
            for (const m of group.members) assert.equal(await checkHealth(m.address), "SERVING");
            const other = new GrpcClient(group.members[1]!.address);
            try {
              const err = await other.unary(Inference.method.listModels, {}).then(
                () => assert.fail("a member other than rank 0 answered ListModels"),
                (e: ServiceError) => e,
              );
              assert.equal(err.code, Code.UNIMPLEMENTED);
            } finally {
              other.close();
            }
          });
      });
  });

describe("a parallel replica configured by the operator's environment (e2e)", () => {
  const modelDir = path.join(REFERENCE_DIR, "tiny-mixtral");
  let group: Group;
  after(() => group?.stop());

  it("reads TESSERA_STAGE, TESSERA_NUM_STAGES, TESSERA_TENSOR_RANK, TESSERA_TENSOR_SIZE and TESSERA_PEERS", async () => {
    const prompt = referenceCases("tiny-mixtral")[0]!.prompt_ids;
    const [expected] = (await singleProcess(modelDir, [prompt])).greedy;
    group = await startGroup(modelDir, { stages: 2, tensorSize: 2 }, ENGINE_ARGS, "environment");
    const client = new GrpcClient(group.coordinator.address);
    try {
      const tokens = await viaGroup(client, prompt);
      assert.deepEqual(
        tokens.map((t) => t.tokenId),
        expected!.map((t) => t.tokenId),
      );
    } finally {
      client.close();
    }
  });
});

describe("several sequences, logit_bias and prompt logprobs on a parallel replica (e2e)", () => {
  const modelDir = path.join(REFERENCE_DIR, "tiny-llama");
  const prompt = referenceCases("tiny-llama")[1]!.prompt_ids;
  // n=3 forks from one prefill on rank 0; the bias must reach the last stage, which samples.
  const sampling = { ...SAMPLED, n: 3, logitBias: new Map([[40, 2.5]]), promptLogprobs: 2 };
  let group: Group;
  after(() => group?.stop());

  it("PP=2: the single process's sequences, biased picks and prompt logprobs (1e-4)", async () => {
    const engine = await Engine.load(modelDir, { engine: { attention: "onnx-ops" }, threads: 1 });
    const want: number[][] = [[], [], []];
    let wantPrompt: (number | undefined)[] = [];
    try {
      for await (const e of engine.generate({ requestId: "single-n", promptIds: prompt, sampling }))
        if (e.type === "tokens") {
          want[e.index ?? 0]!.push(...e.tokens.map((t) => t.tokenId));
          if (e.promptTokens) wantPrompt = e.promptTokens.map((t) => t.logprob);
        }
    } finally {
      await engine.close();
    }
    group = await startGroup(modelDir, { stages: 2, tensorSize: 1 }, ENGINE_ARGS);
    const client = new GrpcClient(group.coordinator.address);
    try {
      const messages: GenerateResponse[] = await new Promise((resolve, reject) => {
        const got: GenerateResponse[] = [];
        const stream = client.serverStream(Inference.method.generate, {
          prompt: { case: "tokenIds", value: { ids: prompt } },
          sampling: {
            maxTokens: SAMPLED.maxTokens,
            ignoreEos: true,
            temperature: SAMPLED.temperature,
            topP: SAMPLED.topP,
            seed: SAMPLED.seed!,
            n: 3,
            logitBias: { 40: 2.5 },
            promptLogprobs: 2,
          },
        });
        stream.on("data", (m: GenerateResponse) => got.push(m));
        stream.on("end", () => resolve(got));
        stream.on("error", reject);
      });
      const ids = [0, 1, 2].map((i) =>
        messages.filter((m) => m.index === i).flatMap((m) => m.tokens.map((t) => t.tokenId)),
      );
      assert.deepEqual(ids, want);
      assert.ok(new Set(ids.map((s) => s.join(","))).size > 1, "the sequences differ");
      const entries = messages.find((m) => m.promptLogprobs.length > 0)!.promptLogprobs;
      assert.equal(entries.length, prompt.length);
      for (const [i, t] of entries.entries())
        if (i > 0) assert.ok(Math.abs(t.logprob - wantPrompt[i]!) <= 1e-4, `prompt token ${i}`);
    } finally {
      client.close();
    }
  });
});

// Real processes for the router's disaggregation specs: tiny checkpoints of every architecture,
// `tessera serve` workers with a Redis tier (a real redis-server from the harness), and what the specs
// read from them: KV blocks in use (tessera.v1.WorkerLoad) and counters from their /metrics.
import { setTimeout as delay } from "node:timers/promises";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { WorkerLoad } from "../../proto/gen/tessera/v1/load_pb.js";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { presetCheckpoint } from "../checkpoint.ts";
import type { Request } from "../router/grpc-stream.ts";

export const ARCHITECTURES = ["llama", "mistral", "qwen2", "mixtral"] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

/** A tiny checkpoint (`tessera model create --preset tiny`) in a folder named tiny-<arch>, its model id. */
export const tinyCheckpointOf = (arch: Architecture): Promise<string> => presetCheckpoint("tiny", arch);

/** `tessera serve` with the Redis tier at `redisUrl` and /metrics, once it serves. */
export async function startKvWorker(
  modelDir: string,
  redisUrl: string,
  args: string[] = [],
): Promise<Served> {
  const served = await startServe(modelDir, ["--kv-redis", redisUrl, "--metrics-port", "0", ...args]);
  await waitUntilServing(served.address, 60_000);
  return served;
}

/** Token ids of the tiny vocabulary (512), different for each seed. */
export const promptIds = (seed: number, n: number) =>
  Array.from({ length: n }, (_, i) => 3 + ((seed * 131 + i * 37 + ((i * i) % 7)) % 500));

/** A greedy request for `ids` that ignores eos, so its length is max_tokens. */
export function greedy(model: string, ids: number[], maxTokens: number, stop: string[] = []): Request {
  return {
    model,
    prompt: { case: "tokenIds", value: { ids } },
    sampling: { maxTokens, ignoreEos: true, logprobs: 2, stop },
  };
}

/**
 * A sampled request for `ids` with a fixed seed (temperature 0.9, top_p 0.9), ignoring eos: its tokens
 * are a function of the seed and each token's position, so every serving path must give the same ones.
 */
export function seeded(model: string, ids: number[], maxTokens: number, stop: string[] = []): Request {
  return {
    model,
    prompt: { case: "tokenIds", value: { ids } },
    sampling: { maxTokens, ignoreEos: true, logprobs: 2, stop, temperature: 0.9, topP: 0.9, seed: 20261127n },
  };
}

/** A whole generation asked of one worker directly (colocated): ids, text and logprobs. */
export async function colocated(worker: Served, request: Request) {
  const client = new GrpcClient(worker.address);
  try {
    const ids: number[] = [];
    const logprobs: number[] = [];
    let text = "";
    for await (const m of client.serverStream(Inference.method.generate, request)) {
      for (const t of m.tokens) {
        ids.push(t.tokenId);
        logprobs.push(t.logprob);
      }
      text += m.textDelta;
    }
    return { ids, logprobs, text };
  } finally {
    client.close();
  }
}

export async function kvBlocksUsed(worker: Served): Promise<number> {
  const client = new GrpcClient(worker.address);
  try {
    return (await client.unary(WorkerLoad.method.getLoad, {}, { deadline: Date.now() + 5_000 })).kvBlocksUsed;
  } finally {
    client.close();
  }
}

/**
 * Each worker's KV blocks in use once its requests have been freed: polls until they equal `baseline`
 * (requests end on the worker a little after their last message reaches the client) or 10 s pass,
 * and returns what it read last.
 */
export async function settledBlocks(workers: readonly Served[], baseline = 0): Promise<number[]> {
  let used: number[] = [];
  for (let i = 0; i < 100; i++) {
    used = await Promise.all(workers.map(kvBlocksUsed));
    if (used.every((n) => n === baseline)) break;
    await delay(100);
  }
  return used;
}

/** A counter from a worker's /metrics, summed over the series whose labels include `labels`. */
export async function workerMetric(worker: Served, name: string, labels: Record<string, string> = {}) {
  const port = worker.logs.find((l) => l["msg"] === "metrics served at /metrics")?.["metricsPort"];
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      total += Number(line.split(" ").at(-1));
  }
  return total;
}

// Greedy Generate over gRPC against a worker or router endpoint, and the same completion from
// `tessera generate --json`, for comparing token ids.
import { Metadata } from "@grpc/grpc-js";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { runTessera } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";

export const PROMPT = "Once upon a time";
export const MAX_TOKENS = 8;

/**
 * `prompt` and a session id (the router's x-session-id: its routing key) default to none; `model` to ""
 * (the only model served).
 */
export async function generateIds(
  endpoint: string,
  options: { prompt?: string; sessionId?: string; model?: string } = {},
): Promise<number[]> {
  return (await generate(endpoint, options)).ids;
}

/**
 * The greedy ids, the worker a router says served them (x-tessera-endpoint) and its response-cache
 * outcome (x-tessera-cache: hit, coalesced, miss or off); both "" from a worker.
 */
export async function generate(
  endpoint: string,
  options: { prompt?: string; sessionId?: string; apiKey?: string; model?: string } = {},
): Promise<{ ids: number[]; servedBy: string; cache: string }> {
  const client = new GrpcClient(endpoint);
  try {
    const ids: number[] = [];
    let servedBy = "";
    let cache = "";
    const metadata = new Metadata();
    if (options.sessionId !== undefined) metadata.set("x-session-id", options.sessionId);
    if (options.apiKey !== undefined) metadata.set("authorization", `Bearer ${options.apiKey}`);
    const stream = client.serverStream(
      Inference.method.generate,
      {
        model: options.model ?? "",
        prompt: { case: "text", value: options.prompt ?? PROMPT },
        sampling: { maxTokens: MAX_TOKENS, ignoreEos: true },
      },
      { deadline: Date.now() + 20_000 },
      metadata,
    );
    stream.on("metadata", (m: Metadata) => {
      servedBy = m.get("x-tessera-endpoint")[0]?.toString() ?? "";
      cache = m.get("x-tessera-cache")[0]?.toString() ?? "";
    });
    for await (const message of stream) for (const token of message.tokens) ids.push(token.tokenId);
    return { ids, servedBy, cache };
  } finally {
    client.close();
  }
}

export async function localGreedyIds(modelDir: string): Promise<number[]> {
  const args = ["generate", "--model", modelDir, "--prompt", PROMPT, "--max-tokens", String(MAX_TOKENS)];
  const run = await runTessera([...args, "--ignore-eos", "--json"]);
  if (run.code !== 0) throw new Error(`tessera generate failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { output_ids: number[] }).output_ids;
}

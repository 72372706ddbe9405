// Closed-loop load: `concurrency` clients each send their next request as soon as the last one ended,
// over a grpc-js client; every request's start, time to first token, end, serving endpoint and the
// worker's own time on it (its server-timing trailer) are kept.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { Metadata, type StatusObject } from "@grpc/grpc-js";
import type { GenerateRequestSchema } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { type GenerateRequest, Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { GrpcClient } from "../../../services/rpc/grpc-client.ts";
import { parseServerTiming, SERVER_TIMING } from "../../../services/rpc/server-timing.ts";

export type Request = MessageInitShape<typeof GenerateRequestSchema> & { session?: string };

export interface Sample {
  /** ms since the run started. */
  start: number;
  ttft: number;
  latency: number;
  endpoint: string;
  tokens: number;
  /** What the worker's server-timing trailer said it took (ms): NaN without one. */
  workerMs: number;
  /** What the router's said it took, the worker's time included (ms): NaN without a router. */
  routerMs: number;
}

export function call(client: GrpcClient, request: Request, origin: number): Promise<Sample> {
  const { session, ...message } = request;
  const metadata = new Metadata();
  if (session) metadata.set("x-session-id", session);
  const start = performance.now();
  const stream = client.serverStream(Inference.method.generate, message, {}, metadata);
  let ttft = 0;
  let tokens = 0;
  let endpoint = "direct";
  stream.on("metadata", (m: Metadata) => {
    endpoint = m.get("x-tessera-endpoint")[0]?.toString() ?? "direct";
  });
  stream.on("data", (m: { tokens: unknown[] }) => {
    if (ttft === 0) ttft = performance.now() - start;
    tokens += m.tokens.length;
  });
  let workerMs = Number.NaN;
  let routerMs = Number.NaN;
  stream.on("status", (status: StatusObject) => {
    const timing = parseServerTiming(String(status.metadata.get(SERVER_TIMING)[0] ?? ""));
    workerMs = timing["worker"] ?? Number.NaN;
    routerMs = timing["router"] ?? Number.NaN;
  });
  return new Promise((resolve, reject) => {
    stream.on("end", () =>
      resolve({
        start: start - origin,
        ttft,
        latency: performance.now() - start,
        endpoint,
        tokens,
        workerMs,
        routerMs,
      }),
    );
    stream.on("error", reject);
  });
}

/** Sends every request, `concurrency` at a time, over one connection; samples in request order. */
export async function closedLoop(
  address: string,
  requests: readonly Request[],
  concurrency: number,
): Promise<Sample[]> {
  const client = new GrpcClient(address);
  await client.waitForReady(10_000);
  const samples: Sample[] = new Array(requests.length);
  const origin = performance.now();
  let next = 0;
  const lane = async () => {
    for (let n = next++; n < requests.length; n = next++)
      samples[n] = await call(client, requests[n]!, origin);
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
  } finally {
    client.close();
  }
  return samples;
}

export type { GenerateRequest };

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

// Collects a Generate stream from a grpc-js client with the metadata the router sends.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Metadata, type ServiceError, type StatusObject } from "@grpc/grpc-js";
import {
  type GenerateRequestSchema,
  type GenerateResponse,
  Inference,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import type { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { parseServerTiming, SERVER_TIMING } from "../../services/rpc/server-timing.ts";

export type Request = MessageInitShape<typeof GenerateRequestSchema>;

export interface Streamed {
  messages: GenerateResponse[];
  endpoint: string | undefined;
  cache: string | undefined;
  /** The error that ended the stream, if any (after `messages`). */
  error: ServiceError | undefined;
  /** The server-timing trailer's durations (ms) by hop; empty without one. */
  timing: Record<string, number>;
}

export function generate(
  client: GrpcClient,
  request: Request,
  headers: Record<string, string> = {},
  deadlineMs?: number,
  /** Sees each message as it arrives (the first is number 1), with the stream collected so far. */
  onMessage?: (message: GenerateResponse, n: number, sofar: Streamed) => void,
): Promise<Streamed> {
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
  const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
  const stream = client.serverStream(Inference.method.generate, request, options, metadata);
  const result: Streamed = {
    messages: [],
    endpoint: undefined,
    cache: undefined,
    error: undefined,
    timing: {},
  };
  stream.on("metadata", (m: Metadata) => {
    result.endpoint = m.get("x-tessera-endpoint")[0]?.toString();
    result.cache = m.get("x-tessera-cache")[0]?.toString();
  });
  stream.on("data", (m: GenerateResponse) => {
    result.messages.push(m);
    onMessage?.(m, result.messages.length, result);
  });
  stream.on("status", (status: StatusObject) => {
    result.timing = parseServerTiming(String(status.metadata.get(SERVER_TIMING)[0] ?? ""));
  });
  return new Promise((resolve) => {
    stream.on("end", () => resolve(result));
    stream.on("error", (err: ServiceError) => resolve({ ...result, error: err }));
  });
}

export const textOf = (s: Streamed) => s.messages.map((m) => m.textDelta).join("");
export const idsOf = (s: Streamed) => s.messages.flatMap((m) => m.tokens.map((t) => t.tokenId));

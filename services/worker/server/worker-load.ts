// The tessera.v1.WorkerLoad service: how busy this worker is (scheduler queues, KV pool, calls in
// flight), read on demand so routers can balance load between replicas.
import { create } from "@bufbuild/protobuf";
import type { ServerUnaryCall, sendUnaryData } from "@grpc/grpc-js";
import {
  type GetLoadRequest,
  type GetLoadResponse,
  GetLoadResponseSchema,
  type WorkerLoad,
} from "../../../proto/gen/tessera/v1/load_pb.js";
import type { GrpcHandlers } from "../../rpc/grpc-service.ts";

/** The engine's side of a load report (the Engine's virtual engines, summed, and block pool satisfy it). */
export interface LoadSource {
  readonly engines: { readonly numRunning: number; readonly numWaiting: number };
  readonly pool: { readonly numUsed: number; readonly numBlocks: number };
}

export interface LoadReport {
  running: number;
  waiting: number;
  kvBlocksUsed: number;
  kvBlocksTotal: number;
}

export function engineLoad(engine: LoadSource): () => LoadReport {
  return () => ({
    running: engine.engines.numRunning,
    waiting: engine.engines.numWaiting,
    kvBlocksUsed: engine.pool.numUsed,
    kvBlocksTotal: engine.pool.numBlocks,
  });
}

type WorkerLoadMethods = typeof WorkerLoad extends { method: infer M } ? M : never;

export function workerLoadHandlers(
  load: () => LoadReport,
  callsInFlight: () => number,
): GrpcHandlers<WorkerLoadMethods> {
  return {
    getLoad: (
      _call: ServerUnaryCall<GetLoadRequest, GetLoadResponse>,
      callback: sendUnaryData<GetLoadResponse>,
    ) => callback(null, create(GetLoadResponseSchema, { ...load(), callsInFlight: callsInFlight() })),
  };
}

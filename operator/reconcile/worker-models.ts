// Which model names a worker pod serves, as it answers tessera.v1.Inference/ListModels: what the
// model's router will see when it asks the same worker, so the operator calls the model Ready only when
// the router can route to it by the name clients send (served-names.ts). One unary call per ready entry
// pod, on its pod IP and gRPC port; the operator needs to reach the workers' gRPC port for this (the
// chart's worker NetworkPolicy lets it).
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";

export interface WorkerPodRef {
  namespace: string;
  name: string;
  /** host:port of the pod's gRPC server. */
  endpoint: string;
}

export interface WorkerModels {
  /** The ids the worker serves (its ListModels answer); rejects when it cannot be asked. */
  servedNames(pod: WorkerPodRef): Promise<string[]>;
}

export class GrpcWorkerModels implements WorkerModels {
  readonly #timeoutMs: number;

  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 3_000;
  }

  async servedNames(pod: WorkerPodRef): Promise<string[]> {
    const client = new GrpcClient(pod.endpoint);
    try {
      const { models } = await client.unary(
        Inference.method.listModels,
        {},
        { deadline: Date.now() + this.#timeoutMs },
      );
      return models.map((m) => m.id);
    } finally {
      client.close();
    }
  }
}

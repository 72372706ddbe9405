// Which model names a worker pod serves, as it answers tessera.v1.Inference/ListModels: what the
// model's router will see when it asks the same worker, so the operator calls the model Ready only when
// the router can route to it by the name clients send (served-names.ts). One unary call per ready entry
// pod, on its pod IP and gRPC port; the operator needs to reach the workers' gRPC port for this (the
// chart's worker NetworkPolicy lets it).
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../services/kernel/errors.ts";
import { GrpcClient, PLAINTEXT } from "../../services/rpc/grpc-client.ts";
import { clientSecurity } from "../../services/rpc/tls-credentials.ts";
import type { TlsFolder } from "../../services/rpc/tls-folder.ts";

export interface WorkerPodRef {
  namespace: string;
  name: string;
  /** host:port of the pod's gRPC server. */
  endpoint: string;
  /** The pod serves mutual TLS (its model's spec.tls), its certificate naming `serverName` if set. */
  tls?: { serverName?: string | undefined } | undefined;
}

export interface WorkerModels {
  /** The ids the worker serves (its ListModels answer); rejects when it cannot be asked. */
  servedNames(pod: WorkerPodRef): Promise<string[]>;
}

export class GrpcWorkerModels implements WorkerModels {
  readonly #timeoutMs: number;
  readonly #tls: TlsFolder | undefined;

  /** `tls`: the identity presented to workers that serve mutual TLS (the operator's --tls-dir). */
  constructor(options: { timeoutMs?: number; tls?: TlsFolder } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 3_000;
    this.#tls = options.tls;
  }

  async servedNames(pod: WorkerPodRef): Promise<string[]> {
    if (pod.tls && !this.#tls)
      throw new TesseraError(
        Code.FAILED_PRECONDITION,
        "the worker serves mutual TLS (spec.tls): give the operator a certificate (--tls-dir, the chart's operator.tls.secretName)",
      );
    const security = pod.tls ? clientSecurity(this.#tls, pod.tls.serverName) : PLAINTEXT;
    const client = new GrpcClient(pod.endpoint, {}, security);
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

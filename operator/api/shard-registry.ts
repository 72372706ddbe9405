// Reading the shard registry: what a router routes to, from an InferenceModel's status. Only entry
// shards (stage 0, rank 0: the pod that serves tessera.v1.Inference for its replica) that are Ready
// and have an endpoint take requests; they are named by pod, so a hash ring keyed by name keeps a
// replica's place when its pod's IP changes.
import type { InferenceModelStatus, Role } from "../../services/api/inference-model-status.ts";

export interface ServingEndpoint {
  /** The pod name. */
  name: string;
  /** host:port of its gRPC server. */
  address: string;
  role: Role;
  replica: number;
}

export function servingEndpoints(status: InferenceModelStatus | undefined, role?: Role): ServingEndpoint[] {
  return (status?.shards ?? [])
    .filter((s) => s.entry && s.ready && s.endpoint !== undefined && (role === undefined || s.role === role))
    .map((s) => ({ name: s.pod, address: s.endpoint ?? "", role: s.role, replica: s.replica }));
}

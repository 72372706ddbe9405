// The endpoints an InferenceModel's status registers (the operator's shard registry,
// services/api/inference-model-status.ts): one per replica, its entry shard (stage 0, rank 0: the
// others are its peers), once the pod is Ready and has an address. Named by pod, so the hash ring
// stays put when a pod's IP changes; with the shard's role (prefill, decode or both).
import type { InferenceModel } from "../../api/kinds.ts";
import type { EndpointSpec } from "./discovery.ts";

export function shardEndpoints(model: InferenceModel | undefined): EndpointSpec[] {
  const specs: EndpointSpec[] = [];
  for (const shard of model?.status?.shards ?? []) {
    if (!shard.entry || !shard.ready || !shard.endpoint) continue;
    specs.push({ name: shard.pod, address: shard.endpoint, role: shard.role });
  }
  return specs.sort((a, b) => a.name.localeCompare(b.name));
}

// The headless Service of a model's worker pods: it gives every pod a stable DNS name
// (<hostname>.<model>-workers.<namespace>.svc) that its group peers are told before any pod has an
// IP, so it publishes pods that are not Ready yet.
import { LABELS, MANAGED_BY, SPEC_HASH_ANNOTATION, WORKER_GRPC_PORT } from "../../services/api/group.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { headlessServiceName, type ModelRef } from "../placement/planner.ts";
import { ownerReference } from "../placement/pod-template.ts";
import { shortHash } from "../placement/revision.ts";

export function workersService(model: ModelRef): KubeObject {
  const spec = {
    clusterIP: "None",
    publishNotReadyAddresses: true,
    selector: { [LABELS.model]: model.name },
    ports: [{ name: "grpc", port: WORKER_GRPC_PORT, targetPort: WORKER_GRPC_PORT, protocol: "TCP" }],
  };
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: headlessServiceName(model.name),
      namespace: model.namespace,
      labels: { [LABELS.model]: model.name, [LABELS.managedBy]: MANAGED_BY },
      annotations: { [SPEC_HASH_ANNOTATION]: shortHash({ spec, owner: model.uid }) },
      ownerReferences: [ownerReference(model)],
    },
    spec,
  };
}

/** The spec-hash annotation an object the operator applies carries (what its spec was made from). */
export function specHash(object: KubeObject | undefined): string | undefined {
  return object?.metadata.annotations?.[SPEC_HASH_ANNOTATION];
}

/**
 * Whether the live object already is what the operator would apply (skip the write): it exists, is
 * not being deleted and carries the desired spec hash. For the workers' Service and the router's
 * Deployment and Service.
 */
export function liveUpToDate(live: KubeObject | undefined, desired: KubeObject): boolean {
  return (
    live !== undefined &&
    live.metadata.deletionTimestamp === undefined &&
    specHash(live) === specHash(desired)
  );
}

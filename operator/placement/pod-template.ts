// The Pod of one shard (pure). Pods meet the "restricted" Pod Security profile (pod-security.ts,
// shared with the router's pods) and get no service-account token (workers never call the API). Probes use the worker's grpc.health.v1 service; the startup probe allows 10 minutes of
// weight loading before liveness applies.

import type { ResourceRequirements } from "../../services/api/common-types.ts";
import {
  API_VERSION,
  LABELS,
  MANAGED_BY,
  WORKER_APP,
  WORKER_GRPC_PORT,
  WORKER_METRICS_PORT,
} from "../../services/api/group.ts";
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import type { WorkerPoolSpec } from "../../services/api/worker-pool.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { headlessServiceName, type ModelRef, type PodGroup, type ShardAssignment } from "./planner.ts";
import {
  modelVolumeMounts,
  modelVolumes,
  RESTRICTED_CONTAINER_SECURITY,
  RESTRICTED_POD_SECURITY,
} from "./pod-security.ts";
import { serveArgs, shardEnv } from "./shard-env.ts";
import { grpcPortProbe, tlsEnv, tlsVolumeMounts, tlsVolumes } from "./tls-pod.ts";

/** How many pods the pod's group has (its gang), for readiness of groups of an older revision. */
export const GROUP_SIZE_ANNOTATION = "serving.tessera.dev/group-size";

export function groupLabel(role: string, replica: number): string {
  return `${role}-${replica}`;
}

export function podLabels(model: ModelRef, group: PodGroup, shard: ShardAssignment): Record<string, string> {
  return {
    [LABELS.name]: WORKER_APP,
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.model]: model.name,
    [LABELS.role]: group.role,
    [LABELS.replica]: String(group.replica),
    [LABELS.stage]: String(shard.stage),
    [LABELS.rank]: String(shard.rank),
    [LABELS.group]: groupLabel(group.role, group.replica),
    [LABELS.revision]: group.revision,
    [LABELS.pool]: group.pool,
  };
}

export function ownerReference(model: ModelRef) {
  return {
    apiVersion: API_VERSION,
    kind: "InferenceModel",
    name: model.name,
    uid: model.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The pool's resources with the model's per-resource overrides. */
export function mergeResources(
  pool: ResourceRequirements,
  model: ResourceRequirements,
): ResourceRequirements {
  const requests = { ...pool.requests, ...model.requests };
  const limits = { ...pool.limits, ...model.limits };
  return {
    ...(Object.keys(requests).length > 0 ? { requests } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
}

type Affinity = Record<string, unknown>;

/** The pool's affinity plus: prefer a replica's pods on one node, and replicas on different nodes. */
export function mergeAffinity(pool: Affinity | undefined, model: ModelRef, group: PodGroup): Affinity {
  const host = "kubernetes.io/hostname";
  const together = {
    weight: 100,
    podAffinityTerm: {
      labelSelector: {
        matchLabels: { [LABELS.model]: model.name, [LABELS.group]: groupLabel(group.role, group.replica) },
      },
      topologyKey: host,
    },
  };
  const apart = {
    weight: 50,
    podAffinityTerm: {
      labelSelector: {
        matchLabels: { [LABELS.model]: model.name },
        matchExpressions: [
          { key: LABELS.group, operator: "NotIn", values: [groupLabel(group.role, group.replica)] },
        ],
      },
      topologyKey: host,
    },
  };
  const preferred = (kind: string) => {
    const section = (pool?.[kind] ?? {}) as Record<string, unknown>;
    const terms = (section["preferredDuringSchedulingIgnoredDuringExecution"] ?? []) as unknown[];
    return { section, terms };
  };
  const affinity = preferred("podAffinity");
  const anti = preferred("podAntiAffinity");
  return {
    ...pool,
    podAffinity: {
      ...affinity.section,
      preferredDuringSchedulingIgnoredDuringExecution: [...affinity.terms, together],
    },
    podAntiAffinity: {
      ...anti.section,
      preferredDuringSchedulingIgnoredDuringExecution: [...anti.terms, apart],
    },
  };
}

export function shardPod(
  model: ModelRef,
  spec: InferenceModelSpec,
  pool: WorkerPoolSpec,
  group: PodGroup,
  shard: ShardAssignment,
): KubeObject {
  // service "" (the server's overall health) is what the API server defaults it to; kubectl describe
  // expects it set.
  const grpcProbe = grpcPortProbe(WORKER_GRPC_PORT, spec.tls?.secretName !== undefined);
  const resources = mergeResources(pool.resources, spec.resources);
  const pvc = spec.model.pvc;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: shard.podName,
      namespace: model.namespace,
      labels: podLabels(model, group, shard),
      annotations: { [GROUP_SIZE_ANNOTATION]: String(shard.worldSize) },
      ownerReferences: [ownerReference(model)],
    },
    spec: {
      hostname: shard.hostname,
      subdomain: headlessServiceName(model.name),
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 45,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: RESTRICTED_POD_SECURITY,
      ...(pool.nodeSelector ? { nodeSelector: pool.nodeSelector } : {}),
      ...(pool.tolerations ? { tolerations: pool.tolerations } : {}),
      ...(pool.runtimeClassName ? { runtimeClassName: pool.runtimeClassName } : {}),
      affinity: mergeAffinity(pool.affinity, model, group),
      volumes: [...modelVolumes(pvc), ...tlsVolumes(spec.tls, "worker")],
      containers: [
        {
          name: "worker",
          image: pool.image,
          imagePullPolicy: pool.imagePullPolicy,
          command: pool.command,
          args: serveArgs(spec),
          env: [...shardEnv(model, spec, group.role, group.replica, shard), ...tlsEnv(spec.tls, "worker")],
          ports: [
            { name: "grpc", containerPort: WORKER_GRPC_PORT, protocol: "TCP" },
            { name: "metrics", containerPort: WORKER_METRICS_PORT, protocol: "TCP" },
          ],
          resources,
          startupProbe: { ...grpcProbe, periodSeconds: 2, failureThreshold: 300 },
          readinessProbe: { ...grpcProbe, periodSeconds: 2, failureThreshold: 2 },
          livenessProbe: { ...grpcProbe, periodSeconds: 10, failureThreshold: 3 },
          securityContext: RESTRICTED_CONTAINER_SECURITY,
          volumeMounts: [...modelVolumeMounts(pvc), ...tlsVolumeMounts(spec.tls, "worker")],
        },
      ],
    },
  };
}

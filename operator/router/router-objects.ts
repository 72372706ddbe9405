// The objects of the router the operator runs for each InferenceModel (pure), all named
// `<model>-router`, owned by the model (garbage-collected with it) and applied with the operator's
// field manager:
//   ServiceAccount + Role + RoleBinding  the router may get, list and watch inferencemodels in the
//                                        namespace (Kubernetes discovery of the model's shards)
//   Deployment                           spec.routing.replicas pods (active-active, spread over nodes) of
//                                        `tessera router --config-json <router-config.ts> --host $(POD_IP)`
//                                        with the image and command of the model's default WorkerPool;
//                                        restricted Pod Security like the workers; readiness is its
//                                        grpc.health.v1; rolls (surge 1, none unavailable) when the
//                                        routing changes
//   Service                              ports grpc, http and metrics; status.routerEndpoint names it
//   PodDisruptionBudget                  at most one router pod voluntarily disrupted at a time
import { LABELS, MANAGED_BY, SPEC_HASH_ANNOTATION } from "../../services/api/group.ts";
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import type { WorkerPoolSpec } from "../../services/api/worker-pool.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import type { ModelRef } from "../placement/planner.ts";
import {
  modelVolumeMounts,
  modelVolumes,
  RESTRICTED_CONTAINER_SECURITY,
  RESTRICTED_POD_SECURITY,
} from "../placement/pod-security.ts";
import { ownerReference } from "../placement/pod-template.ts";
import { canonicalJson, shortHash } from "../placement/revision.ts";
import { SCRATCH_MOUNT } from "../placement/shard-env.ts";
import { grpcPortProbe, tlsEnv, tlsVolumeMounts, tlsVolumes } from "../placement/tls-pod.ts";
import {
  ROUTER_API_KEYS_DIR,
  ROUTER_CACHE_PASSWORD_ENV,
  ROUTER_GRPC_PORT,
  ROUTER_HTTP_PORT,
  ROUTER_METRICS_PORT,
  routerConfig,
} from "./router-config.ts";

export const ROUTER_APP = "tessera-router";
/** On router pods (instead of the model label, which marks worker pods): the model they route to. */
export const ROUTER_LABEL = "serving.tessera.dev/router";

export function routerName(model: string): string {
  return `${model}-router`;
}

/** What status.routerEndpoint says: the router Service's gRPC address. */
export function routerEndpoint(model: ModelRef): string {
  return `${routerName(model.name)}.${model.namespace}.svc:${ROUTER_GRPC_PORT}`;
}

export function routerPodLabels(model: ModelRef): Record<string, string> {
  return { [LABELS.name]: ROUTER_APP, [ROUTER_LABEL]: model.name };
}

/** Metadata of every router object; the spec-hash annotation lets unchanged applies be skipped. */
function metadata(model: ModelRef, desired: unknown) {
  return {
    name: routerName(model.name),
    namespace: model.namespace,
    labels: { [LABELS.name]: ROUTER_APP, [LABELS.managedBy]: MANAGED_BY, [LABELS.model]: model.name },
    annotations: { [SPEC_HASH_ANNOTATION]: shortHash({ desired, owner: model.uid }) },
    ownerReferences: [ownerReference(model)],
  };
}

export function routerServiceAccount(model: ModelRef): KubeObject {
  return { apiVersion: "v1", kind: "ServiceAccount", metadata: metadata(model, "serviceaccount") };
}

const RBAC = "rbac.authorization.k8s.io";

export function routerRole(model: ModelRef): KubeObject {
  const rules = [
    { apiGroups: ["serving.tessera.dev"], resources: ["inferencemodels"], verbs: ["get", "list", "watch"] },
  ];
  return { apiVersion: `${RBAC}/v1`, kind: "Role", metadata: metadata(model, rules), rules };
}

export function routerRoleBinding(model: ModelRef): KubeObject {
  const name = routerName(model.name);
  const roleRef = { apiGroup: RBAC, kind: "Role", name };
  const subjects = [{ kind: "ServiceAccount", name, namespace: model.namespace }];
  return {
    apiVersion: `${RBAC}/v1`,
    kind: "RoleBinding",
    metadata: metadata(model, { roleRef, subjects }),
    roleRef,
    subjects,
  };
}

export function routerService(model: ModelRef): KubeObject {
  const spec = {
    selector: routerPodLabels(model),
    ports: [
      { name: "grpc", port: ROUTER_GRPC_PORT, targetPort: ROUTER_GRPC_PORT, protocol: "TCP" },
      { name: "http", port: ROUTER_HTTP_PORT, targetPort: ROUTER_HTTP_PORT, protocol: "TCP" },
      { name: "metrics", port: ROUTER_METRICS_PORT, targetPort: ROUTER_METRICS_PORT, protocol: "TCP" },
    ],
  };
  return { apiVersion: "v1", kind: "Service", metadata: metadata(model, spec), spec };
}

/** The router's arguments after the pool's command: the whole config inline. */
export function routerArgs(model: ModelRef, spec: InferenceModelSpec): string[] {
  return ["router", "--config-json", canonicalJson(routerConfig(model, spec)), "--host", "$(POD_IP)"];
}

export function routerDeployment(
  model: ModelRef,
  spec: InferenceModelSpec,
  pool: WorkerPoolSpec,
): KubeObject {
  const grpcProbe = grpcPortProbe(ROUTER_GRPC_PORT, spec.tls?.frontDoor !== undefined);
  const pvc = spec.model.pvc;
  const passwordSecret = spec.kvTransfer.redis?.passwordSecret;
  const apiKeys = spec.routing.apiKeysSecret;
  const labels = routerPodLabels(model);
  const podSpec = {
    serviceAccountName: routerName(model.name),
    // The router reads the API (its discovery), so unlike the workers it gets its token.
    automountServiceAccountToken: true,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 45,
    securityContext: RESTRICTED_POD_SECURITY,
    volumes: [
      ...modelVolumes(pvc),
      ...tlsVolumes(spec.tls, "router"),
      ...(apiKeys
        ? [
            {
              name: "api-keys",
              secret: { secretName: apiKeys.name, items: [{ key: apiKeys.key, path: "api-keys.yaml" }] },
            },
          ]
        : []),
    ],
    // Active-active router pods on different nodes where the cluster has them, so one node's loss
    // leaves the Service a router.
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: "kubernetes.io/hostname",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: labels },
      },
    ],
    containers: [
      {
        name: "router",
        image: pool.image,
        imagePullPolicy: pool.imagePullPolicy,
        command: pool.command,
        args: routerArgs(model, spec),
        env: [
          { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
          { name: "TMPDIR", value: SCRATCH_MOUNT },
          ...(passwordSecret
            ? [{ name: ROUTER_CACHE_PASSWORD_ENV, valueFrom: { secretKeyRef: { ...passwordSecret } } }]
            : []),
          ...tlsEnv(spec.tls, "router"),
        ],
        ports: [
          { name: "grpc", containerPort: ROUTER_GRPC_PORT, protocol: "TCP" },
          { name: "http", containerPort: ROUTER_HTTP_PORT, protocol: "TCP" },
          { name: "metrics", containerPort: ROUTER_METRICS_PORT, protocol: "TCP" },
        ],
        resources: { requests: { cpu: "100m", memory: "256Mi" } },
        startupProbe: { ...grpcProbe, periodSeconds: 1, failureThreshold: 120 },
        readinessProbe: { ...grpcProbe, periodSeconds: 2, failureThreshold: 2 },
        livenessProbe: { ...grpcProbe, periodSeconds: 10, failureThreshold: 3 },
        securityContext: RESTRICTED_CONTAINER_SECURITY,
        volumeMounts: [
          ...modelVolumeMounts(pvc),
          ...(apiKeys ? [{ name: "api-keys", mountPath: ROUTER_API_KEYS_DIR, readOnly: true }] : []),
          ...tlsVolumeMounts(spec.tls, "router"),
        ],
      },
    ],
  };
  const deploymentSpec = {
    replicas: spec.routing.replicas,
    selector: { matchLabels: labels },
    strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    template: { metadata: { labels }, spec: podSpec },
  };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: metadata(model, deploymentSpec),
    spec: deploymentSpec,
  };
}

/** The router objects in the order they are applied (identity and permissions before the pods). */
/**
 * At most one router pod voluntarily disrupted at a time (a node drain, a cluster upgrade): with
 * spec.routing.replicas of 2 or more the Service keeps a router; with 1 it does not hold a drain up.
 */
export function routerPodDisruptionBudget(model: ModelRef): KubeObject {
  const spec = { maxUnavailable: 1, selector: { matchLabels: routerPodLabels(model) } };
  return { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: metadata(model, spec), spec };
}

export function routerObjects(model: ModelRef, spec: InferenceModelSpec, pool: WorkerPoolSpec): KubeObject[] {
  return [
    routerServiceAccount(model),
    routerRole(model),
    routerRoleBinding(model),
    routerService(model),
    routerPodDisruptionBudget(model),
    routerDeployment(model, spec, pool),
  ];
}

/** Whether the Deployment has a router pod that is available (Ready long enough). */
export function routerAvailable(deployment: KubeObject | undefined): boolean {
  const status = deployment?.["status"] as { availableReplicas?: number } | undefined;
  return deployment?.metadata.deletionTimestamp === undefined && (status?.availableReplicas ?? 0) > 0;
}

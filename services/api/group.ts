// The API group of Tessera's custom resources, and the names the operator stamps on what it creates.
import type { ResourceRef } from "../kube/resources.ts";

export const GROUP = "serving.tessera.dev";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Tessera's resources, as the Kubernetes API serves them (kube/resources.ts has the built-in ones). */
export const INFERENCE_MODELS: ResourceRef = { group: GROUP, version: VERSION, resource: "inferencemodels" };
export const WORKER_POOLS: ResourceRef = { group: GROUP, version: VERSION, resource: "workerpools" };

/** The one field manager of every write the operator makes (server-side apply). */
export const FIELD_MANAGER = "tessera-operator";

/** Set on an InferenceModel until its pods and KV-store keys are cleaned up. */
export const CLEANUP_FINALIZER = `${GROUP}/cleanup`;

/** Labels on every worker pod (selectors use them; values are bounded by the name rules). */
export const LABELS = {
  name: "app.kubernetes.io/name",
  managedBy: "app.kubernetes.io/managed-by",
  model: `${GROUP}/model`,
  role: `${GROUP}/role`,
  replica: `${GROUP}/replica`,
  stage: `${GROUP}/stage`,
  rank: `${GROUP}/rank`,
  group: `${GROUP}/group`,
  revision: `${GROUP}/revision`,
  pool: `${GROUP}/pool`,
} as const;

export const WORKER_APP = "tessera-worker";
export const MANAGED_BY = "tessera-operator";

/** Annotation with the hash of an applied object's desired state (skip applies that change nothing). */
export const SPEC_HASH_ANNOTATION = `${GROUP}/spec-hash`;

/** gRPC (tessera.v1.Inference + grpc.health.v1) and Prometheus ports of every worker. */
export const WORKER_GRPC_PORT = 50051;
export const WORKER_METRICS_PORT = 9090;

// The two kinds of serving.tessera.dev/v1alpha1, their TypeScript types and CRD definitions.
import type { KubeObject } from "../kube/kube-object.ts";
import type { KindDefinition } from "./crd-builder.ts";
import { type InferenceModelSpec, inferenceModelSpecSchema } from "./inference-model-spec.ts";
import { type InferenceModelStatus, inferenceModelStatusSchema } from "./inference-model-status.ts";
import {
  type WorkerPoolSpec,
  type WorkerPoolStatus,
  workerPoolSpecSchema,
  workerPoolStatusSchema,
} from "./worker-pool.ts";

/** An InferenceModel as read from the API: spec not yet parsed (see parseInferenceModelSpec). */
export interface InferenceModel extends KubeObject {
  spec?: unknown;
  status?: InferenceModelStatus;
}

export interface WorkerPool extends KubeObject {
  spec?: unknown;
  status?: WorkerPoolStatus;
}

export type { InferenceModelSpec, InferenceModelStatus, WorkerPoolSpec, WorkerPoolStatus };

/** Pod names are `<model>-<role>-<replica>-s<stage>-t<rank>-<revision>`: the model name stays short. */
export const MAX_MODEL_NAME = 40;

export const inferenceModelKind: KindDefinition = {
  kind: "InferenceModel",
  plural: "inferencemodels",
  singular: "inferencemodel",
  shortNames: ["im"],
  description:
    "A model served by Tessera: the operator places its worker pods (replicas x pipeline stages x tensor ranks per role), registers its shards in status and keeps it serving.",
  spec: inferenceModelSpecSchema,
  status: inferenceModelStatusSchema,
  rules: [
    {
      rule: `size(self.metadata.name) <= ${MAX_MODEL_NAME} && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`,
      message: `metadata.name must be a DNS label of at most ${MAX_MODEL_NAME} characters (it prefixes pod names)`,
    },
  ],
  scale: {
    specReplicasPath: ".spec.replicas",
    statusReplicasPath: ".status.replicas",
    labelSelectorPath: ".status.selector",
  },
  columns: [
    { name: "Model", type: "string", jsonPath: ".status.servedName", description: "Model id clients send." },
    {
      name: "Mode",
      type: "string",
      jsonPath: ".spec.serving.mode",
      description: "colocated or disaggregated.",
    },
    { name: "Replicas", type: "integer", jsonPath: ".spec.replicas", description: "Desired replicas." },
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas", description: "Ready replicas." },
    {
      name: "Status",
      type: "string",
      jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
      description: "Why the model is or is not Ready.",
    },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp", description: "Age." },
  ],
};

export const workerPoolKind: KindDefinition = {
  kind: "WorkerPool",
  plural: "workerpools",
  singular: "workerpool",
  shortNames: ["wp"],
  description:
    "A class of worker capacity (image, resources including GPUs, placement, pod limits) that InferenceModels place their pods in.",
  spec: workerPoolSpecSchema,
  status: workerPoolStatusSchema,
  columns: [
    { name: "Image", type: "string", jsonPath: ".spec.image", description: "Worker image.", priority: 1 },
    { name: "Pods", type: "integer", jsonPath: ".status.podsInUse", description: "Pods in use." },
    { name: "Max", type: "integer", jsonPath: ".spec.maxPods", description: "Most pods allowed." },
    { name: "GPUs", type: "integer", jsonPath: ".status.gpusInUse", description: "GPUs requested." },
    { name: "Models", type: "integer", jsonPath: ".status.models", description: "Models placed here." },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp", description: "Age." },
  ],
};

export const KINDS = [inferenceModelKind, workerPoolKind] as const;

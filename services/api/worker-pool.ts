// WorkerPool: a class of worker capacity (image, resources, placement) that models place pods in.
import { z } from "zod";
import { conditionsSchema, resourceRequirementsSchema, tolerationSchema } from "./common-types.ts";
import { doc, freeForm } from "./schema-kit.ts";

export const DEFAULT_WORKER_IMAGE = "ghcr.io/tessera-dev/tessera:0.1.0";

export const workerPoolSpecSchema = doc(
  z.object({
    image: doc(z.string().min(1).default(DEFAULT_WORKER_IMAGE), "Container image with the tessera CLI."),
    imagePullPolicy: doc(
      z.enum(["Always", "IfNotPresent", "Never"]).default("IfNotPresent"),
      "When the kubelet pulls the image.",
    ),
    command: doc(
      z.array(z.string().min(1)).min(1).default(["tessera"]),
      "Command that runs the tessera CLI in the image; the operator appends `serve --model ...`.",
    ),
    resources: doc(
      resourceRequirementsSchema.prefault({}),
      "Resources of every pod, e.g. requests {cpu: 4, memory: 16Gi, nvidia.com/gpu: 1}.",
    ),
    nodeSelector: doc(z.record(z.string(), z.string()).optional(), "Nodes the pods may run on (labels)."),
    tolerations: doc(z.array(tolerationSchema).optional(), "Taints the pods tolerate (e.g. GPU nodes)."),
    affinity: doc(
      freeForm().optional(),
      "core/v1 Affinity; the operator adds its own terms (a replica's pods together, replicas spread).",
    ),
    runtimeClassName: doc(z.string().min(1).optional(), "RuntimeClass of the pods (e.g. nvidia)."),
    minPods: doc(
      z.int().min(0).max(10_000).default(0),
      "Pods the pool is expected to hold; below it the pool reports Ready=False (BelowMinPods).",
    ),
    maxPods: doc(
      z.int().min(1).max(10_000).default(64),
      "Most pods all models together may run in the pool; a replica that does not fit whole is not placed.",
    ),
  }),
  "The class of capacity.",
  { rules: [{ rule: "self.minPods <= self.maxPods", message: "minPods must not exceed maxPods" }] },
);

export const workerPoolStatusSchema = doc(
  z.object({
    observedGeneration: doc(z.int().min(0).optional(), "The metadata.generation this status describes."),
    podsInUse: doc(z.int().min(0).optional(), "Worker pods in the pool, over all models."),
    readyPods: doc(z.int().min(0).optional(), "Of those, the Ready ones."),
    gpusInUse: doc(z.int().min(0).optional(), "nvidia.com/gpu requested by those pods."),
    podsAvailable: doc(z.int().min(0).optional(), "maxPods minus podsInUse."),
    models: doc(z.int().min(0).optional(), "InferenceModels with pods in the pool."),
    conditions: conditionsSchema,
  }),
  "Capacity in use.",
);

export type WorkerPoolSpec = z.infer<typeof workerPoolSpecSchema>;
export type WorkerPoolStatus = z.infer<typeof workerPoolStatusSchema>;

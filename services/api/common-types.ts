// Schema pieces shared by the InferenceModel and WorkerPool kinds.
import { z } from "zod";
import { doc, quantity } from "./schema-kit.ts";

/** Resource names a pod may request: cpu, memory, ephemeral-storage, or an extended resource. */
const resourceName = z.string().regex(/^([a-z0-9.-]+\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);

const resourceList = () =>
  z.record(resourceName, doc(quantity(), "An amount of the resource (e.g. 500m, 4Gi, 1)."));

export const resourceRequirementsSchema = z.object({
  requests: doc(
    resourceList().optional(),
    "Minimum resources per pod, e.g. {cpu: 2, memory: 8Gi, nvidia.com/gpu: 1}.",
  ),
  limits: doc(resourceList().optional(), "Maximum resources per pod; a GPU limit must equal its request."),
});

export type ResourceRequirements = z.infer<typeof resourceRequirementsSchema>;

export const conditionSchema = z.object({
  type: doc(z.string().min(1), "Condition type: Ready, Progressing or Degraded."),
  status: doc(z.enum(["True", "False", "Unknown"]), "Whether the condition holds."),
  reason: doc(z.string().min(1), "One CamelCase word saying why (e.g. ReplicasReady, RollingOut)."),
  message: doc(z.string(), "What happened, for a person."),
  lastTransitionTime: doc(z.string(), "When the status last changed (RFC 3339)."),
  observedGeneration: doc(z.int().min(0), "The metadata.generation this condition was computed for."),
});

export type Condition = z.infer<typeof conditionSchema>;

export const conditionsSchema = doc(
  z.array(conditionSchema).optional(),
  "Ready (the model serves), Progressing (pods are being created, replaced or removed) and Degraded (something needs attention).",
  { listType: "map", listMapKeys: ["type"] },
);

export const tolerationSchema = z.object({
  key: doc(z.string().optional(), "Taint key the toleration applies to; empty matches all keys."),
  operator: doc(z.enum(["Exists", "Equal"]).default("Equal"), "Exists matches any value; Equal needs value."),
  value: doc(z.string().optional(), "Taint value to match (operator Equal)."),
  effect: doc(
    z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
    "Taint effect to match; empty matches all effects.",
  ),
  tolerationSeconds: doc(z.int().min(0).optional(), "How long a NoExecute taint is tolerated."),
});

export type Toleration = z.infer<typeof tolerationSchema>;

export const secretKeySelectorSchema = z.object({
  name: doc(z.string().min(1), "Name of a Secret in the model's namespace."),
  key: doc(z.string().min(1).default("password"), "Key within the Secret."),
});

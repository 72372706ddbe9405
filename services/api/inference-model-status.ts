// InferenceModel.status: what the operator observed, including the shard registry the router reads.
import { z } from "zod";
import { conditionsSchema } from "./common-types.ts";
import { doc } from "./schema-kit.ts";

export const ROLES = ["both", "prefill", "decode"] as const;
export type Role = (typeof ROLES)[number];

export const shardSchema = z.object({
  role: doc(z.enum(ROLES), "both (colocated), prefill or decode."),
  replica: doc(z.int().min(0), "Replica index within the role."),
  stage: doc(z.int().min(0), "Pipeline stage of this shard."),
  rank: doc(z.int().min(0), "Tensor-parallel rank within the stage."),
  pod: doc(z.string(), "Pod running the shard."),
  endpoint: doc(z.string().optional(), "host:port of the shard's gRPC server (pod IP), once it has one."),
  ready: doc(z.boolean(), "The pod is Ready (its gRPC health check serves)."),
  entry: doc(
    z.boolean(),
    "Requests for this replica go here (stage 0, rank 0); the other shards are its peers.",
  ),
  revision: doc(z.string(), "The spec revision the shard's pod was created from."),
});

export type Shard = z.infer<typeof shardSchema>;

export const inferenceModelStatusSchema = doc(
  z.object({
    observedGeneration: doc(z.int().min(0).optional(), "The metadata.generation this status describes."),
    revision: doc(z.string().optional(), "Hash of the pod template of the current spec."),
    servedName: doc(z.string().optional(), "The model id clients send."),
    replicas: doc(
      z.int().min(0).optional(),
      "Replicas that have pods (decode replicas in disaggregated mode); the scale subresource reads it.",
    ),
    readyReplicas: doc(z.int().min(0).optional(), "Replicas whose pods are all Ready (gang readiness)."),
    updatedReplicas: doc(z.int().min(0).optional(), "Replicas whose pods all run the current revision."),
    prefillReplicas: doc(z.int().min(0).optional(), "Prefill replicas that have pods (disaggregated)."),
    readyPrefillReplicas: doc(z.int().min(0).optional(), "Prefill replicas whose pods are all Ready."),
    selector: doc(z.string().optional(), "Label selector of the model's pods (for the scale subresource)."),
    routerEndpoint: doc(
      z.string().optional(),
      "host:port of the model's router once the operator manages one; empty until then.",
    ),
    shards: doc(
      z.array(shardSchema).optional(),
      "Every shard of every replica: the registry the router watches (it routes to ready entry shards).",
      { listType: "atomic" },
    ),
    conditions: conditionsSchema,
  }),
  "What the operator observed.",
);

export type InferenceModelStatus = z.infer<typeof inferenceModelStatusSchema>;

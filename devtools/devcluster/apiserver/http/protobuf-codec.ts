// application/vnd.kubernetes.protobuf request bodies: the magic "k8s\0", a runtime.Unknown
// envelope naming apiVersion/kind, and the object's message in `raw`. helm's release storage
// writes Secrets and DeleteOptions this way, and kubectl's imperative commands (create namespace,
// create deployment, create serviceaccount, create role, ...) send every built-in kind so. They
// are decoded to the JSON form the rest of the server works with (proto-json.ts). Only the kinds in
// SCHEMAS (messages in devtools/devcluster/proto/k8s) are understood; others get 415.
import { type DescMessage, fromBinary } from "@bufbuild/protobuf";
import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import { DeploymentSchema, ReplicaSetSchema, StatefulSetSchema } from "../../proto/gen/k8s/apps_pb.js";
import { SelfSubjectReviewSchema, TokenRequestSchema } from "../../proto/gen/k8s/authentication_pb.js";
import {
  SelfSubjectAccessReviewSchema,
  SelfSubjectRulesReviewSchema,
} from "../../proto/gen/k8s/authorization_pb.js";
import { LeaseSchema } from "../../proto/gen/k8s/coordination_pb.js";
import {
  ConfigMapSchema,
  EventSchema,
  NamespaceSchema,
  NodeSchema,
  PodSchema,
  SecretSchema,
  ServiceAccountSchema,
  ServiceSchema,
} from "../../proto/gen/k8s/core_pb.js";
import { EndpointSliceSchema } from "../../proto/gen/k8s/discovery_pb.js";
import { DeleteOptionsSchema } from "../../proto/gen/k8s/meta_pb.js";
import {
  ClusterRoleBindingSchema,
  ClusterRoleSchema,
  RoleBindingSchema,
  RoleSchema,
} from "../../proto/gen/k8s/rbac_pb.js";
import { UnknownSchema } from "../../proto/gen/k8s/runtime_pb.js";
import { apiErrors } from "../core/api-status.ts";
import { objectJson } from "./proto-json.ts";

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";

const RBAC = "rbac.authorization.k8s.io/v1";

/** Message schemas by apiVersion and kind: the built-in kinds the server serves. */
const SCHEMAS: Record<string, DescMessage> = {
  "v1/Namespace": NamespaceSchema,
  "v1/Pod": PodSchema,
  "v1/Service": ServiceSchema,
  "v1/ConfigMap": ConfigMapSchema,
  "v1/Secret": SecretSchema,
  "v1/ServiceAccount": ServiceAccountSchema,
  "v1/Event": EventSchema,
  "v1/Node": NodeSchema,
  "apps/v1/Deployment": DeploymentSchema,
  "apps/v1/ReplicaSet": ReplicaSetSchema,
  "apps/v1/StatefulSet": StatefulSetSchema,
  "coordination.k8s.io/v1/Lease": LeaseSchema,
  "discovery.k8s.io/v1/EndpointSlice": EndpointSliceSchema,
  [`${RBAC}/Role`]: RoleSchema,
  [`${RBAC}/RoleBinding`]: RoleBindingSchema,
  [`${RBAC}/ClusterRole`]: ClusterRoleSchema,
  [`${RBAC}/ClusterRoleBinding`]: ClusterRoleBindingSchema,
  "authorization.k8s.io/v1/SelfSubjectAccessReview": SelfSubjectAccessReviewSchema,
  "authorization.k8s.io/v1/SelfSubjectRulesReview": SelfSubjectRulesReviewSchema,
  "authentication.k8s.io/v1/SelfSubjectReview": SelfSubjectReviewSchema,
  "authentication.k8s.io/v1/TokenRequest": TokenRequestSchema,
};

/** The message of a kind decodeProtobuf understands. */
export function protobufSchema(apiVersion: string, kind: string): DescMessage | undefined {
  // DeleteOptions is meta/v1 but travels with whatever group version the request is for.
  if (kind === "DeleteOptions") return DeleteOptionsSchema;
  return SCHEMAS[`${apiVersion}/${kind}`];
}

export function decodeProtobuf(body: Buffer): JsonObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw apiErrors.badRequest("protobuf body does not start with the k8s magic");
  const envelope = fromBinary(UnknownSchema, body.subarray(4));
  const kind = envelope.typeMeta?.kind ?? "";
  const apiVersion = envelope.typeMeta?.apiVersion || "v1";
  const schema = protobufSchema(apiVersion, kind);
  if (!schema) throw apiErrors.unsupportedMediaType(`${PROTOBUF_CONTENT_TYPE} (kind ${kind || "unknown"})`);
  let message: Record<string, unknown>;
  try {
    message = fromBinary(schema, envelope.raw) as unknown as Record<string, unknown>;
  } catch (err) {
    throw apiErrors.badRequest(
      `the protobuf ${kind} could not be decoded: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return objectJson(schema, message, kind === "DeleteOptions" ? "v1" : apiVersion, kind);
}

// application/vnd.kubernetes.protobuf request bodies: the magic "k8s\0", a runtime.Unknown
// envelope naming apiVersion/kind, and the object's message in `raw`. helm's release storage
// writes Secrets (and DeleteOptions) this way; they are decoded to the JSON form the rest of the
// server works with. Only the kinds in proto/k8s are understood; others get 415.
import { type DescMessage, fromBinary, isFieldSet, type MessageShape } from "@bufbuild/protobuf";
import {
  type ConfigMap,
  ConfigMapSchema,
  type Secret,
  SecretSchema,
} from "../../../../proto/gen/k8s/core_pb.js";
import {
  type DeleteOptions,
  DeleteOptionsSchema,
  type ObjectMeta,
  type Time,
} from "../../../../proto/gen/k8s/meta_pb.js";
import { UnknownSchema } from "../../../../proto/gen/k8s/runtime_pb.js";
import { apiErrors } from "../core/api-status.ts";
import { formatTime, type ObjectMeta as JsonMeta, type JsonObject } from "../core/kube-object.ts";

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";

function time(value: Time | undefined): string | undefined {
  return value ? formatTime(Number(value.seconds) * 1000 + Math.floor(value.nanos / 1e6)) : undefined;
}

function nonEmpty<T extends object>(value: T): T | undefined {
  return Object.keys(value).length > 0 ? value : undefined;
}

function metadata(meta: ObjectMeta | undefined): JsonMeta {
  if (!meta) return {};
  const out: JsonMeta = {};
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== "" && !(Array.isArray(value) && value.length === 0))
      out[key] = value;
  };
  set("name", meta.name);
  set("generateName", meta.generateName);
  set("namespace", meta.namespace);
  set("uid", meta.uid);
  set("resourceVersion", meta.resourceVersion);
  set("labels", nonEmpty(meta.labels));
  set("annotations", nonEmpty(meta.annotations));
  set("finalizers", meta.finalizers);
  set("creationTimestamp", time(meta.creationTimestamp));
  set(
    "ownerReferences",
    meta.ownerReferences.map((r) => ({
      apiVersion: r.apiVersion,
      kind: r.kind,
      name: r.name,
      uid: r.uid,
      ...(r.controller ? { controller: true } : {}),
      ...(r.blockOwnerDeletion ? { blockOwnerDeletion: true } : {}),
    })),
  );
  return out;
}

function base64Map(map: Record<string, Uint8Array>): JsonObject | undefined {
  return nonEmpty(
    Object.fromEntries(Object.entries(map).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  );
}

function secretJson(secret: Secret, apiVersion: string): JsonObject {
  const out: JsonObject = { apiVersion, kind: "Secret", metadata: metadata(secret.metadata) as JsonObject };
  if (secret.type) out["type"] = secret.type;
  if (secret.immutable) out["immutable"] = true;
  const data = base64Map(secret.data);
  if (data) out["data"] = data;
  const stringData = nonEmpty(secret.stringData);
  if (stringData) out["stringData"] = stringData;
  return out;
}

function configMapJson(configMap: ConfigMap, apiVersion: string): JsonObject {
  const out: JsonObject = {
    apiVersion,
    kind: "ConfigMap",
    metadata: metadata(configMap.metadata) as JsonObject,
  };
  if (configMap.immutable) out["immutable"] = true;
  const data = nonEmpty(configMap.data);
  if (data) out["data"] = data;
  const binary = base64Map(configMap.binaryData);
  if (binary) out["binaryData"] = binary;
  return out;
}

function deleteOptionsJson(options: DeleteOptions): JsonObject {
  const out: JsonObject = { apiVersion: "v1", kind: "DeleteOptions" };
  if (isFieldSet(options, DeleteOptionsSchema.field.gracePeriodSeconds))
    out["gracePeriodSeconds"] = Number(options.gracePeriodSeconds);
  if (options.propagationPolicy) out["propagationPolicy"] = options.propagationPolicy;
  if (options.orphanDependents) out["orphanDependents"] = true;
  if (options.dryRun.length > 0) out["dryRun"] = options.dryRun;
  const pre = options.preconditions;
  if (pre && (pre.uid || pre.resourceVersion)) {
    out["preconditions"] = {
      ...(pre.uid ? { uid: pre.uid } : {}),
      ...(pre.resourceVersion ? { resourceVersion: pre.resourceVersion } : {}),
    };
  }
  return out;
}

type Decoder = (raw: Uint8Array, apiVersion: string) => JsonObject;

function decoder<D extends DescMessage>(
  schema: D,
  toJson: (message: MessageShape<D>, apiVersion: string) => JsonObject,
): Decoder {
  return (raw, apiVersion) => toJson(fromBinary(schema, raw), apiVersion);
}

const DECODERS: Record<string, Decoder> = {
  Secret: decoder(SecretSchema, secretJson),
  ConfigMap: decoder(ConfigMapSchema, configMapJson),
  DeleteOptions: decoder(DeleteOptionsSchema, (options) => deleteOptionsJson(options)),
};

export function decodeProtobuf(body: Buffer): JsonObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw apiErrors.badRequest("protobuf body does not start with the k8s magic");
  const envelope = fromBinary(UnknownSchema, body.subarray(4));
  const kind = envelope.typeMeta?.kind ?? "";
  const decode = DECODERS[kind];
  if (!decode) throw apiErrors.unsupportedMediaType(`${PROTOBUF_CONTENT_TYPE} (kind ${kind || "unknown"})`);
  return decode(envelope.raw, envelope.typeMeta?.apiVersion ?? "v1");
}

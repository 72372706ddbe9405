// Kubernetes protobuf messages (devtools/devcluster/proto/k8s, decoded by protobuf-es) to the JSON form the API server
// stores: the proto field names are the JSON names; Time, MicroTime, Quantity, IntOrString and
// FieldsV1 become their JSON forms; bytes become base64; the few fields Go inlines (json:",inline")
// are spread into their parent. Go writes every non-pointer field to protobuf, so empty strings,
// lists and maps are dropped, and zero numbers and false only where the Go field is a non-pointer
// `omitempty` one (a pointer's zero, such as replicas: 0 or runAsUser: 0, is kept); status
// counters are such fields.
import { type DescField, type DescMessage, isFieldSet, ScalarType } from "@bufbuild/protobuf";
import type { JsonObject, JsonValue } from "../../../../services/kube/kube-object.ts";

const META = "k8s.io.apimachinery.pkg.apis.meta.v1";

/** Go fields tagged json:",inline" that carry a protobuf field of their own (and every embedded
 * LocalObjectReference, in ConfigMapKeySelector, SecretEnvSource, ...). */
const INLINE = new Set([
  "k8s.io.api.core.v1.Volume.volumeSource",
  "k8s.io.api.core.v1.PersistentVolumeSpec.persistentVolumeSource",
  "k8s.io.api.core.v1.Probe.handler",
  "k8s.io.api.core.v1.EphemeralContainer.ephemeralContainerCommon",
]);

/** Non-pointer `omitempty` numbers and booleans: a zero here means "not set". */
const OMIT_ZERO = new Set([
  "generation",
  "stdin",
  "stdinOnce",
  "tty",
  "hostNetwork",
  "hostPID",
  "hostIPC",
  "hostPort",
  "readOnly",
  "initialDelaySeconds",
  "timeoutSeconds",
  "periodSeconds",
  "successThreshold",
  "failureThreshold",
  "minReadySeconds",
  "paused",
  "nodePort",
  "healthCheckNodePort",
  "publishNotReadyAddresses",
  "unschedulable",
  "partition",
  "count",
]);

/** In status messages (DeploymentStatus, ...) counters are non-pointer `omitempty`, but these. */
const STATUS_KEEP_ZERO = new Set(["restartCount"]);

/** Pointer strings whose empty value means something (`storageClassName: ""`: no class). */
const KEEP_EMPTY_STRING = new Set(["storageClassName"]);

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

function timeJson(seconds: bigint, nanos: number, micro: boolean): string | undefined {
  if (seconds === 0n && nanos === 0) return undefined; // Go's zero time marshals as an empty message
  const iso = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return micro ? `${iso}.${pad(Math.floor(nanos / 1000), 6)}Z` : `${iso}Z`;
}

type Message = Record<string, unknown>;

/** The JSON form of k8s types that are not plain objects; undefined when `desc` is an ordinary one. */
function special(desc: DescMessage, message: Message): { value: JsonValue | undefined } | undefined {
  switch (desc.typeName) {
    case `${META}.Time`:
      return { value: timeJson(message["seconds"] as bigint, message["nanos"] as number, false) };
    case `${META}.MicroTime`:
      return { value: timeJson(message["seconds"] as bigint, message["nanos"] as number, true) };
    case `${META}.FieldsV1`: {
      const raw = message["Raw"] as Uint8Array;
      return { value: raw.length > 0 ? (JSON.parse(Buffer.from(raw).toString("utf8")) as JsonValue) : {} };
    }
    case "k8s.io.apimachinery.pkg.api.resource.Quantity":
      return { value: (message["string"] as string) || undefined };
    case "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
      return {
        value: message["type"] === 1n ? (message["strVal"] as string) : (message["intVal"] as number),
      };
    default:
      return undefined;
  }
}

function scalarJson(type: ScalarType, value: unknown): JsonValue {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (typeof value === "bigint") return Number(value);
  if (type === ScalarType.BYTES) return "";
  return value as JsonValue;
}

function omitsZero(field: DescField): boolean {
  if (OMIT_ZERO.has(field.name)) return true;
  return (
    field.parent.name.endsWith("Status") &&
    field.fieldKind === "scalar" &&
    field.scalar !== ScalarType.BOOL &&
    !STATUS_KEEP_ZERO.has(field.name)
  );
}

function fieldJson(field: DescField, value: unknown): JsonValue | undefined {
  switch (field.fieldKind) {
    case "scalar": {
      if (value === "" && !KEEP_EMPTY_STRING.has(field.name)) return undefined;
      if ((value === false || value === 0 || value === 0n) && omitsZero(field)) return undefined;
      if (value instanceof Uint8Array && value.length === 0) return undefined;
      return scalarJson(field.scalar, value);
    }
    case "message":
      return messageJson(field.message, value as Message);
    case "list": {
      const items = value as unknown[];
      if (items.length === 0) return undefined;
      if (field.listKind === "message")
        return items.map((item) => messageJson(field.message, item as Message) ?? null);
      if (field.listKind === "scalar") return items.map((item) => scalarJson(field.scalar, item));
      return undefined;
    }
    case "map": {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length === 0) return undefined;
      const out: JsonObject = {};
      for (const [key, item] of entries) {
        if (field.mapKind === "message") out[key] = messageJson(field.message, item as Message) ?? null;
        else if (field.mapKind === "scalar") out[key] = scalarJson(field.scalar, item);
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** The JSON form of a decoded message; undefined for values JSON leaves out (a zero Time). */
export function messageJson(desc: DescMessage, message: Message): JsonValue | undefined {
  const known = special(desc, message);
  if (known) return known.value;
  const out: JsonObject = {};
  for (const field of desc.fields) {
    if (!isFieldSet(message as never, field)) continue;
    const value = fieldJson(field, message[field.localName]);
    if (value === undefined) continue;
    const inline = INLINE.has(`${desc.typeName}.${field.name}`) || field.name === "localObjectReference";
    if (inline && typeof value === "object" && value !== null && !Array.isArray(value))
      Object.assign(out, value);
    else out[field.name] = value;
  }
  return out;
}

/** A top-level object: apiVersion and kind (from the protobuf envelope) and its fields. */
export function objectJson(
  desc: DescMessage,
  message: Message,
  apiVersion: string,
  kind: string,
): JsonObject {
  const body = messageJson(desc, message);
  return { apiVersion, kind, ...(body && typeof body === "object" && !Array.isArray(body) ? body : {}) };
}

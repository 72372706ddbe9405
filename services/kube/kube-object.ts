// The shapes of Kubernetes objects, as plain JSON, for everything that reads or writes them: the
// operator, the router's discovery and the dev cluster's API server. Only metadata is typed (with
// the fields any of them uses); everything else passes through untouched. apiVersion and kind are
// optional because the items of a list response do not carry them.

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: JsonObject;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** "namespace/name" (or "name" for cluster-scoped objects): the work-queue key. */
export function objectKey(object: { metadata: ObjectMeta }): string {
  return keyOf(object.metadata.namespace, object.metadata.name ?? "");
}

/** The work-queue key of the object with this namespace and name (splitKey reads it back). */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  return slash < 0
    ? { namespace: "", name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The shapes of Kubernetes objects the operator reads and writes. Only the fields it uses are
// typed; everything else passes through untouched.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
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
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** "namespace/name" (or "name" for cluster-scoped objects): the work-queue key. */
export function objectKey(object: { metadata: ObjectMeta }): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name ?? ""}` : (name ?? "");
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

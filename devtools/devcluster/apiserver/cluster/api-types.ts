// Options and results of the in-process cluster API (ClusterApi). They mirror the query
// parameters of the Kubernetes REST API, so the HTTP layer is a thin translation.
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import type { ResourceType } from "../resources/resource-type.ts";
import type { StoreEventType } from "../store/object-store.ts";
import type { FieldValidation } from "./custom-object-validation.ts";

/** Which resource a call is about: API group ("" for core), version and plural resource name. */
export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
}

export interface ListOptions {
  /** Undefined lists across all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ObjectList {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this version; "" or "0" starts with ADDED events for the current state. */
  resourceVersion?: string;
  /** Like resourceVersion "0" plus a bookmark marking the end of the initial events. */
  sendInitialEvents?: boolean;
}

export type WatchEventType = StoreEventType | "BOOKMARK" | "ERROR";

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface WatchHandle {
  stop(): void;
}

export type PatchType = "json" | "merge" | "strategic" | "apply";

export interface WriteOptions {
  dryRun?: boolean;
  /** Who makes the change (managedFields). Defaults to "unknown". */
  fieldManager?: string;
  fieldValidation?: FieldValidation;
  /** "status" or "scale". */
  subresource?: string;
  /** Server-side apply: take ownership of conflicting fields. */
  force?: boolean;
  /** Receives warnings (unknown fields under fieldValidation=Warn). */
  onWarning?: (message: string) => void;
  /** Checks the admitted object before it is stored (dry run too); throws to refuse (RBAC escalation). */
  validate?: (type: ResourceType, object: KubeObject) => void;
}

export type PropagationPolicy = "Background" | "Foreground" | "Orphan";

export interface DeleteOptions {
  dryRun?: boolean;
  propagationPolicy?: PropagationPolicy;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  /** The object's last state: gone from the store when `deleted`, still terminating otherwise. */
  object: KubeObject;
  deleted: boolean;
}

// The API calls the operator makes, as an interface: the HTTPS client implements it against a real
// (or dev) API server; tests may wrap it (e.g. to check calls against the RBAC rules).
import type { KubeObject } from "./kube-object.ts";
import type { ResourceRef } from "./resources.ts";

export interface ListOptions {
  /** "" = all namespaces. */
  namespace: string;
  labelSelector?: string;
}

export interface ObjectList<T extends KubeObject = KubeObject> {
  items: T[];
  resourceVersion: string;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WatchHandle {
  /** Resolves when the server ends the stream (timeout); rejects on errors, 410 Gone included. */
  done: Promise<void>;
  stop(): void;
}

export interface ApplyOptions {
  /** "status" applies to the status subresource. */
  subresource?: "status";
  /** Take ownership of fields another manager holds (the operator is their authority). */
  force?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: "Background" | "Foreground" | "Orphan";
  /** Delete only this incarnation of the object. */
  uid?: string;
}

export interface KubeClient {
  /** The object, or undefined when it does not exist. */
  get<T extends KubeObject>(ref: ResourceRef, namespace: string, name: string): Promise<T | undefined>;
  list<T extends KubeObject>(ref: ResourceRef, options: ListOptions): Promise<ObjectList<T>>;
  watch<T extends KubeObject>(
    ref: ResourceRef,
    options: ListOptions & { resourceVersion: string; timeoutSeconds?: number },
    onEvent: (event: WatchEvent<T>) => void,
  ): WatchHandle;
  create<T extends KubeObject>(ref: ResourceRef, namespace: string, object: KubeObject): Promise<T>;
  /** PUT with the object's resourceVersion (409 when it changed meanwhile). */
  update<T extends KubeObject>(ref: ResourceRef, namespace: string, object: KubeObject): Promise<T>;
  /** Server-side apply with the client's field manager; creates the object when absent. */
  apply<T extends KubeObject>(
    ref: ResourceRef,
    namespace: string,
    object: KubeObject,
    options?: ApplyOptions,
  ): Promise<T>;
  mergePatch<T extends KubeObject>(
    ref: ResourceRef,
    namespace: string,
    name: string,
    patch: unknown,
  ): Promise<T>;
  /** False when the object was already gone. */
  delete(ref: ResourceRef, namespace: string, name: string, options?: DeleteOptions): Promise<boolean>;
}

// The storage layer: objects by group-resource, namespace and name, one cluster-wide revision
// counter (resourceVersion), and a bounded log of recent changes that watches replay from.
// Values are cloned on the way in and out, so callers never share state with the store.

import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { apiErrors } from "../core/api-status.ts";
import { cloneObject } from "../core/json-object.ts";

export type StoreEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoreEvent {
  type: StoreEventType;
  groupResource: string;
  revision: number;
  object: KubeObject;
  /** The object before a modification or deletion. */
  previous?: KubeObject;
}

export type StoreListener = (event: StoreEvent) => void;

export interface StoreSnapshot {
  revision: number;
  objects: { groupResource: string; object: KubeObject }[];
}

export interface ObjectStoreOptions {
  /** How many recent events watches can resume from; older resourceVersions get 410 Gone. */
  eventWindow?: number;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

export class ObjectStore {
  #revision = 0;
  #compactedRevision = 0;
  readonly #eventWindow: number;
  readonly #buckets = new Map<string, Map<string, KubeObject>>();
  readonly #log: StoreEvent[] = [];
  readonly #listeners = new Set<StoreListener>();

  constructor(options: ObjectStoreOptions = {}) {
    this.#eventWindow = options.eventWindow ?? 10_000;
  }

  get revision(): number {
    return this.#revision;
  }

  /** The oldest resourceVersion a watch may start from. */
  get compactedRevision(): number {
    return this.#compactedRevision;
  }

  #bucket(groupResource: string): Map<string, KubeObject> {
    let bucket = this.#buckets.get(groupResource);
    if (!bucket) {
      bucket = new Map();
      this.#buckets.set(groupResource, bucket);
    }
    return bucket;
  }

  get(groupResource: string, namespace: string, name: string): KubeObject | undefined {
    const found = this.#buckets.get(groupResource)?.get(keyOf(namespace, name));
    return found ? cloneObject(found) : undefined;
  }

  /** Objects sorted by namespace then name; all namespaces when namespace is undefined. */
  list(groupResource: string, namespace?: string): KubeObject[] {
    const bucket = this.#buckets.get(groupResource);
    if (!bucket) return [];
    const keys = [...bucket.keys()].sort();
    const items: KubeObject[] = [];
    for (const key of keys) {
      const object = bucket.get(key)!;
      if (namespace === undefined || (object.metadata.namespace ?? "") === namespace)
        items.push(cloneObject(object));
    }
    return items;
  }

  groupResources(): string[] {
    return [...this.#buckets.keys()];
  }

  create(groupResource: string, object: KubeObject): KubeObject {
    const bucket = this.#bucket(groupResource);
    const key = keyOf(object.metadata.namespace ?? "", object.metadata.name ?? "");
    if (bucket.has(key)) throw apiErrors.alreadyExists(describe(groupResource, object));
    const stored = this.#stamp(object);
    bucket.set(key, stored);
    this.#emit({ type: "ADDED", groupResource, revision: this.#revision, object: stored });
    return cloneObject(stored);
  }

  /** Replaces the object; a non-empty expected resourceVersion must match the stored one. */
  update(groupResource: string, object: KubeObject): KubeObject {
    const bucket = this.#bucket(groupResource);
    const key = keyOf(object.metadata.namespace ?? "", object.metadata.name ?? "");
    const previous = bucket.get(key);
    if (!previous) throw apiErrors.notFound(describe(groupResource, object));
    const expected = object.metadata.resourceVersion;
    if (expected && expected !== previous.metadata.resourceVersion) {
      throw apiErrors.conflict(
        describe(groupResource, object),
        "the object has been modified; please apply your changes to the latest version and try again",
      );
    }
    const stored = this.#stamp(object);
    bucket.set(key, stored);
    this.#emit({ type: "MODIFIED", groupResource, revision: this.#revision, object: stored, previous });
    return cloneObject(stored);
  }

  delete(groupResource: string, namespace: string, name: string): KubeObject {
    const bucket = this.#bucket(groupResource);
    const previous = bucket.get(keyOf(namespace, name));
    if (!previous) throw apiErrors.notFound({ ...splitGroupResource(groupResource), name });
    bucket.delete(keyOf(namespace, name));
    const final = this.#stamp(previous);
    this.#emit({ type: "DELETED", groupResource, revision: this.#revision, object: final, previous });
    return cloneObject(final);
  }

  /**
   * Calls listener with every event after `fromRevision` that is still in the log, then with each
   * new event. Throws 410 Expired when events after fromRevision were already compacted away.
   */
  watch(fromRevision: number, listener: StoreListener): () => void {
    if (fromRevision < this.#compactedRevision) {
      throw apiErrors.expired(`too old resource version: ${fromRevision} (${this.#compactedRevision})`);
    }
    for (const event of this.#log) if (event.revision > fromRevision) listener(event);
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Forgets logged events up to and including `revision` (tests use it to provoke 410). */
  compact(revision = this.#revision): void {
    while (this.#log.length > 0 && this.#log[0]!.revision <= revision) this.#log.shift();
    this.#compactedRevision = Math.max(this.#compactedRevision, Math.min(revision, this.#revision));
  }

  snapshot(): StoreSnapshot {
    const objects: StoreSnapshot["objects"] = [];
    for (const [groupResource, bucket] of this.#buckets) {
      for (const object of bucket.values()) objects.push({ groupResource, object: cloneObject(object) });
    }
    return { revision: this.#revision, objects };
  }

  /** Loads a snapshot into an empty store; watches can start from its revision on. */
  restore(snapshot: StoreSnapshot): void {
    for (const { groupResource, object } of snapshot.objects) {
      this.#bucket(groupResource).set(
        keyOf(object.metadata.namespace ?? "", object.metadata.name ?? ""),
        object,
      );
    }
    this.#revision = snapshot.revision;
    this.#compactedRevision = snapshot.revision;
  }

  #stamp(object: KubeObject): KubeObject {
    this.#revision++;
    const stored = cloneObject(object);
    stored.metadata.resourceVersion = String(this.#revision);
    return stored;
  }

  #emit(event: StoreEvent): void {
    this.#log.push(event);
    if (this.#log.length > this.#eventWindow) {
      const dropped = this.#log.shift()!;
      this.#compactedRevision = dropped.revision;
    }
    for (const listener of [...this.#listeners]) listener(event);
  }
}

export function splitGroupResource(groupResource: string): { group: string; resource: string } {
  const dot = groupResource.indexOf(".");
  if (dot < 0) return { group: "", resource: groupResource };
  return { resource: groupResource.slice(0, dot), group: groupResource.slice(dot + 1) };
}

function describe(groupResource: string, object: KubeObject) {
  return { ...splitGroupResource(groupResource), name: object.metadata.name ?? "" };
}

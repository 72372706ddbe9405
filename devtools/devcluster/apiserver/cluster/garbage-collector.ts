// The garbage collector: objects whose owners (metadata.ownerReferences) are all gone are
// deleted; an owner deleted in the foreground waits (finalizer foregroundDeletion) until its
// dependents are gone; an owner deleted with propagationPolicy=Orphan releases its dependents.
// Ownership is found by scanning the store, which is small in a dev cluster.
import type { Logger } from "../../../../services/kernel/log.ts";
import type { KubeObject, OwnerReference } from "../../../../services/kube/kube-object.ts";
import { statusCodeOf } from "../core/api-status.ts";
import { parseApiVersion } from "../core/json-object.ts";
import { groupResourceOf, type ResourceType } from "../resources/resource-type.ts";
import type { StoreEvent } from "../store/object-store.ts";
import type { ResourceRef } from "./api-types.ts";
import type { ClusterApi } from "./cluster-api.ts";
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from "./cluster-api-delete.ts";
import { type Scheduler, WorkQueue } from "./work-queue.ts";

const MANAGER = "garbage-collector";

type Work =
  | { kind: "dependents-of"; uid: string }
  | { kind: "owners-of"; groupResource: string; namespace: string; name: string };

export function refOf(type: ResourceType): ResourceRef {
  return { group: type.group, version: type.version, resource: type.plural };
}

export class GarbageCollector {
  readonly #api: ClusterApi;
  readonly #queue: WorkQueue<Work>;
  #stop: (() => void) | undefined;

  constructor(api: ClusterApi, options: { schedule?: Scheduler; log?: Logger } = {}) {
    this.#api = api;
    this.#queue = new WorkQueue((work) => this.#process(work), {
      ...(options.schedule ? { schedule: options.schedule } : {}),
      onError: (err, work) => options.log?.warn({ err, work }, "garbage collection failed"),
    });
  }

  start(): void {
    this.#stop = this.#api.store.watch(this.#api.store.revision, (event) => this.#observe(event));
    for (const groupResource of this.#api.store.groupResources()) {
      for (const object of this.#api.store.list(groupResource))
        this.#observe({ type: "ADDED", groupResource, revision: 0, object });
    }
  }

  stop(): void {
    this.#stop?.();
  }

  idle(): Promise<void> {
    return this.#queue.idle();
  }

  get busy(): boolean {
    return this.#queue.busy;
  }

  #observe(event: StoreEvent): void {
    const meta = event.object.metadata;
    if (event.type === "DELETED" || meta.deletionTimestamp)
      this.#queue.add(`d/${meta.uid}`, { kind: "dependents-of", uid: meta.uid ?? "" });
    const owners = meta.ownerReferences ?? [];
    if (owners.length > 0 && event.type !== "DELETED") {
      const key = `o/${event.groupResource}/${meta.namespace ?? ""}/${meta.name}`;
      this.#queue.add(key, {
        kind: "owners-of",
        groupResource: event.groupResource,
        namespace: meta.namespace ?? "",
        name: meta.name ?? "",
      });
    }
    // A dependent that went away may unblock an owner waiting in the foreground.
    if (event.type === "DELETED")
      for (const owner of owners)
        this.#queue.add(`f/${owner.uid}`, { kind: "dependents-of", uid: owner.uid });
  }

  #process(work: Work): void {
    if (work.kind === "dependents-of") {
      const owner = this.#findByUid(work.uid);
      if (owner) this.#finalizeOwner(owner.type, owner.object);
      else
        for (const dependent of this.#dependents(work.uid))
          this.#checkOwners(dependent.type, dependent.object);
      return;
    }
    const type = this.#api.storageType(work.groupResource);
    const object = type && this.#api.store.get(work.groupResource, work.namespace, work.name);
    if (type && object) this.#checkOwners(type, object);
  }

  /** Deletes a dependent whose owners are all gone (or going in the foreground). */
  #checkOwners(type: ResourceType, object: KubeObject): void {
    if (object.metadata.deletionTimestamp) return;
    const refs = object.metadata.ownerReferences ?? [];
    const states = refs.map((ref) => this.#ownerState(ref, object.metadata.namespace ?? ""));
    if (states.every((s) => s === "present")) return;
    const meta = object.metadata;
    if (states.every((s) => s !== "present")) {
      const propagationPolicy = states.includes("foreground") ? "Foreground" : "Background";
      this.#quietly(() =>
        this.#api.delete(refOf(type), meta.namespace ?? "", meta.name ?? "", { propagationPolicy }),
      );
      return;
    }
    const live = refs.filter((_, i) => states[i] !== "absent");
    if (live.length === refs.length) return;
    this.#quietly(() =>
      this.#api.patch(
        refOf(type),
        meta.namespace ?? "",
        meta.name ?? "",
        "merge",
        { metadata: { ownerReferences: live } } as never,
        { fieldManager: MANAGER },
      ),
    );
  }

  #finalizeOwner(type: ResourceType, owner: KubeObject): void {
    const finalizers = owner.metadata.finalizers ?? [];
    const meta = owner.metadata;
    const dependents = this.#dependents(meta.uid ?? "");
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const dep of dependents) {
        const remaining = (dep.object.metadata.ownerReferences ?? []).filter((r) => r.uid !== meta.uid);
        const patch = { metadata: { ownerReferences: remaining.length > 0 ? remaining : null } };
        this.#quietly(() =>
          this.#api.patch(
            refOf(dep.type),
            dep.object.metadata.namespace ?? "",
            dep.object.metadata.name ?? "",
            "merge",
            patch as never,
            { fieldManager: MANAGER },
          ),
        );
      }
      this.#quietly(() =>
        this.#api.removeFinalizer(
          refOf(type),
          meta.namespace ?? "",
          meta.name ?? "",
          ORPHAN_FINALIZER,
          MANAGER,
        ),
      );
      return;
    }
    if (!finalizers.includes(FOREGROUND_FINALIZER)) {
      for (const dep of dependents) this.#checkOwners(dep.type, dep.object);
      return;
    }
    for (const dep of dependents) {
      const depMeta = dep.object.metadata;
      if (!depMeta.deletionTimestamp)
        this.#quietly(() =>
          this.#api.delete(refOf(dep.type), depMeta.namespace ?? "", depMeta.name ?? "", {
            propagationPolicy: "Foreground",
          }),
        );
    }
    if (this.#dependents(meta.uid ?? "").length === 0) {
      this.#quietly(() =>
        this.#api.removeFinalizer(
          refOf(type),
          meta.namespace ?? "",
          meta.name ?? "",
          FOREGROUND_FINALIZER,
          MANAGER,
        ),
      );
    }
  }

  #ownerState(ref: OwnerReference, namespace: string): "present" | "absent" | "foreground" {
    const { group } = parseApiVersion(ref.apiVersion);
    const type = this.#api.registry.all().find((t) => t.group === group && t.kind === ref.kind);
    if (!type) return "present";
    const owner = this.#api.store.get(groupResourceOf(type), type.namespaced ? namespace : "", ref.name);
    if (!owner || owner.metadata.uid !== ref.uid) return "absent";
    return (owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER) &&
      owner.metadata.deletionTimestamp
      ? "foreground"
      : "present";
  }

  #dependents(uid: string): { type: ResourceType; object: KubeObject }[] {
    const found: { type: ResourceType; object: KubeObject }[] = [];
    for (const groupResource of this.#api.store.groupResources()) {
      const type = this.#api.storageType(groupResource);
      if (!type) continue;
      for (const object of this.#api.store.list(groupResource)) {
        if ((object.metadata.ownerReferences ?? []).some((r) => r.uid === uid)) found.push({ type, object });
      }
    }
    return found;
  }

  #findByUid(uid: string): { type: ResourceType; object: KubeObject } | undefined {
    for (const groupResource of this.#api.store.groupResources()) {
      const type = this.#api.storageType(groupResource);
      const object = type && this.#api.store.list(groupResource).find((o) => o.metadata.uid === uid);
      if (type && object) return { type, object };
    }
    return undefined;
  }

  /** Objects vanish under the collector all the time; a 404 or 409 just means someone was first. */
  #quietly(action: () => unknown): void {
    try {
      action();
    } catch (err) {
      const code = statusCodeOf(err);
      if (code !== 404 && code !== 409) throw err;
    }
  }
}

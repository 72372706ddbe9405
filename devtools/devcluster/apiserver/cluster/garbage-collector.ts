// The garbage collector: objects whose owners (metadata.ownerReferences) are all gone are
// deleted; an owner deleted in the foreground waits (finalizer foregroundDeletion) until its
// dependents are gone; an owner deleted with propagationPolicy=Orphan releases its dependents.
// Ownership is found by scanning the store, which is small in a dev cluster. Work is queued as keys
// on a reconcile loop (services/kube/reconcile-loop.ts): d/<uid> and f/<uid> (the dependents of an
// owner that went or is going), o/<group-resource>/<namespace>/<name> (the owners of an object).
// A failure is logged and not retried: the next change to the objects queues them again.
import { createLogger, type Logger } from "../../../../services/kernel/log.ts";
import type { KubeObject, OwnerReference } from "../../../../services/kube/kube-object.ts";
import { ReconcileLoop } from "../../../../services/kube/reconcile-loop.ts";
import { statusCodeOf } from "../core/api-status.ts";
import { parseApiVersion } from "../core/json-object.ts";
import { groupResourceOf, type ResourceType } from "../resources/resource-type.ts";
import type { StoreEvent } from "../store/object-store.ts";
import type { ResourceRef } from "./api-types.ts";
import type { ClusterApi } from "./cluster-api.ts";
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from "./cluster-api-delete.ts";

const MANAGER = "garbage-collector";

type Work =
  | { kind: "dependents-of"; uid: string }
  | { kind: "owners-of"; groupResource: string; namespace: string; name: string };

export function refOf(type: ResourceType): ResourceRef {
  return { group: type.group, version: type.version, resource: type.plural };
}

/** The work a queued key names (see the keys above). */
function workOf(key: string): Work {
  const [kind, groupResource = "", namespace = "", name = ""] = key.split("/");
  return kind === "o"
    ? { kind: "owners-of", groupResource, namespace, name }
    : { kind: "dependents-of", uid: groupResource };
}

export class GarbageCollector {
  readonly #api: ClusterApi;
  readonly #log: Logger;
  readonly #loop: ReconcileLoop;
  #stop: (() => void) | undefined;

  constructor(api: ClusterApi, options: { log?: Logger } = {}) {
    this.#api = api;
    this.#log = options.log ?? createLogger("garbage-collector", "silent");
    this.#loop = new ReconcileLoop("garbage-collector", (key) => this.#process(key), {
      clock: api.clock,
      log: this.#log,
    });
  }

  start(): void {
    this.#loop.start();
    this.#stop = this.#api.store.watch(this.#api.store.revision, (event) => this.#observe(event));
    for (const groupResource of this.#api.store.groupResources()) {
      for (const object of this.#api.store.list(groupResource))
        this.#observe({ type: "ADDED", groupResource, revision: 0, object });
    }
  }

  stop(): void {
    this.#stop?.();
    void this.#loop.stop();
  }

  idle(): Promise<void> {
    return this.#loop.idle();
  }

  get busy(): boolean {
    return this.#loop.busy;
  }

  #observe(event: StoreEvent): void {
    const meta = event.object.metadata;
    if (event.type === "DELETED" || meta.deletionTimestamp) this.#loop.queue.add(`d/${meta.uid ?? ""}`);
    const owners = meta.ownerReferences ?? [];
    if (owners.length > 0 && event.type !== "DELETED")
      this.#loop.queue.add(`o/${event.groupResource}/${meta.namespace ?? ""}/${meta.name ?? ""}`);
    // A dependent that went away may unblock an owner waiting in the foreground.
    if (event.type === "DELETED") for (const owner of owners) this.#loop.queue.add(`f/${owner.uid}`);
  }

  #process(key: string): undefined {
    try {
      this.#collect(workOf(key));
    } catch (err) {
      this.#log.warn({ err, work: key }, "garbage collection failed");
    }
    return undefined;
  }

  #collect(work: Work): void {
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

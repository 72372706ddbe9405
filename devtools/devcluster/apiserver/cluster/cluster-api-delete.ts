// Deletion: preconditions, finalizers and deletionTimestamp, propagation policies (the orphan and
// foregroundDeletion finalizers the garbage collector acts on), graceful pod deletion, namespaces.

import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { formatTime } from "../../../../services/kube/kube-time.ts";
import { apiErrors } from "../core/api-status.ts";
import { groupResourceOf, type ResourceType } from "../resources/resource-type.ts";
import type { DeleteOptions, DeleteResult, ListOptions, ResourceRef } from "./api-types.ts";
import type { ClusterApiOptions } from "./cluster-api-reads.ts";
import { ClusterWrites } from "./cluster-api-writes.ts";
import { compileFilter } from "./selection.ts";

export const FOREGROUND_FINALIZER = "foregroundDeletion";
export const ORPHAN_FINALIZER = "orphan";
export const NAMESPACE_FINALIZER = "kubernetes";
const PROTECTED_NAMESPACES = new Set(["default", "kube-system", "kube-public"]);

export class ClusterDeletes extends ClusterWrites {
  readonly #gracefulPods: boolean;

  constructor(options: ClusterApiOptions) {
    super(options);
    this.#gracefulPods = options.gracefulPodDeletion ?? false;
  }

  delete(ref: ResourceRef, namespace: string, name: string, options: DeleteOptions = {}): DeleteResult {
    const type = this.resolve(ref);
    const object = this.get(ref, namespace, name);
    this.checkPreconditions(type, object, options);
    const groupResource = groupResourceOf(type);
    if (groupResource === "namespaces" && PROTECTED_NAMESPACES.has(name)) {
      throw apiErrors.forbidden(`namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
    const meta = object.metadata;
    const finalizers = [...(meta.finalizers ?? [])];
    const policy = options.propagationPolicy;
    if (policy === "Foreground" && !finalizers.includes(FOREGROUND_FINALIZER))
      finalizers.push(FOREGROUND_FINALIZER);
    if (policy === "Orphan" && !finalizers.includes(ORPHAN_FINALIZER)) finalizers.push(ORPHAN_FINALIZER);
    const grace = this.gracePeriod(type, object, options);
    const waitsForController =
      groupResource === "namespaces" || groupResource === "customresourcedefinitions.apiextensions.k8s.io";
    if (finalizers.length === 0 && grace === 0 && !waitsForController) {
      if (options.dryRun) return { object, deleted: true };
      const final = this.store.delete(groupResource, meta.namespace ?? "", name);
      this.afterDelete(type, final);
      return { object: this.present(type, final), deleted: true };
    }
    if (
      meta.deletionTimestamp &&
      grace >= (meta.deletionGracePeriodSeconds ?? 0) &&
      sameSet(finalizers, meta.finalizers ?? [])
    ) {
      return { object, deleted: false };
    }
    const now = this.clock.now();
    meta.deletionTimestamp =
      meta.deletionTimestamp && grace > 0 ? meta.deletionTimestamp : formatTime(now + grace * 1000);
    meta.deletionGracePeriodSeconds = grace;
    meta.finalizers = finalizers;
    if (finalizers.length === 0) delete meta.finalizers;
    if (groupResource === "namespaces")
      object["status"] = { ...(object["status"] as object), phase: "Terminating" };
    if (options.dryRun) return { object, deleted: false };
    return { object: this.present(type, this.store.update(groupResource, object)), deleted: false };
  }

  deleteCollection(ref: ResourceRef, options: ListOptions & DeleteOptions): KubeObject[] {
    const type = this.resolve(ref);
    const filter = compileFilter(type.namespaced ? options : { ...options, namespace: undefined });
    const targets = this.store
      .list(groupResourceOf(type), type.namespaced ? options.namespace : undefined)
      .filter(filter);
    return targets.map(
      (t) => this.delete(ref, t.metadata.namespace ?? "", t.metadata.name ?? "", options).object,
    );
  }

  /**
   * Removes an object whose deletion was requested once its controller is done with it (namespaces
   * and CRDs, which wait for their content to go). Returns whether it was removed.
   */
  finalizeDeletion(ref: ResourceRef, namespace: string, name: string): boolean {
    const type = this.resolve(ref);
    const object = this.store.get(groupResourceOf(type), type.namespaced ? namespace : "", name);
    if (!object?.metadata.deletionTimestamp || (object.metadata.finalizers ?? []).length > 0) return false;
    const final = this.store.delete(groupResourceOf(type), object.metadata.namespace ?? "", name);
    this.afterDelete(type, final);
    return true;
  }

  /** Removes a finalizer (controllers call this when their cleanup is done). */
  removeFinalizer(
    ref: ResourceRef,
    namespace: string,
    name: string,
    finalizer: string,
    fieldManager: string,
  ): void {
    const object = this.get(ref, namespace, name);
    const finalizers = object.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    object.metadata.finalizers = finalizers.filter((f) => f !== finalizer);
    this.update(ref, namespace, name, object, { fieldManager });
  }

  private checkPreconditions(type: ResourceType, object: KubeObject, options: DeleteOptions): void {
    const pre = options.preconditions;
    const ref = { group: type.group, resource: type.plural, name: object.metadata.name ?? "" };
    if (pre?.uid && pre.uid !== object.metadata.uid) {
      throw apiErrors.conflict(
        ref,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${object.metadata.uid}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== object.metadata.resourceVersion) {
      throw apiErrors.conflict(
        ref,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${object.metadata.resourceVersion}`,
      );
    }
  }

  /** Seconds a pod gets to stop; 0 for everything else, and for pods no kubelet runs. */
  private gracePeriod(type: ResourceType, object: KubeObject, options: DeleteOptions): number {
    if (!this.#gracefulPods || groupResourceOf(type) !== "pods") return 0;
    const spec = object["spec"] as { nodeName?: string; terminationGracePeriodSeconds?: number } | undefined;
    const phase = (object["status"] as { phase?: string } | undefined)?.phase;
    if (!spec?.nodeName || phase === "Succeeded" || phase === "Failed") return 0;
    return Math.max(0, options.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30);
  }
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

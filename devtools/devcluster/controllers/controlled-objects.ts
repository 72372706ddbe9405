// What the workload controllers share: reading the object a key names (gone or being deleted means
// nothing to do), and watching a kind together with the objects it controls so that a change to
// either queues the controller's key.

import { type KubeObject, keyOf, objectKey } from "../../../services/kube/kube-object.ts";
import type { ReconcileLoop } from "../../../services/kube/reconcile-loop.ts";
import type { ResourceRef, WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { controllerOf } from "./owner-refs.ts";

/** The object, or undefined when it no longer exists (404) or is being deleted. */
export function getLive<T extends KubeObject>(
  api: ClusterApi,
  ref: ResourceRef,
  namespace: string,
  name: string,
): T | undefined {
  let object: KubeObject;
  try {
    object = api.get(ref, namespace, name);
  } catch (err) {
    if (statusCodeOf(err) === 404) return undefined;
    throw err;
  }
  return object.metadata.deletionTimestamp ? undefined : (object as T);
}

/**
 * Watches `kind` (queueing each object's own key) and `owned` objects, queueing the key of the
 * `ownerKind` controller of each; `onOwned` replaces the latter for a controller that needs more.
 */
export function watchControlled(
  api: ClusterApi,
  loop: ReconcileLoop,
  kind: ResourceRef,
  owned: ResourceRef,
  ownerKind: string,
  onOwned?: (object: KubeObject) => void,
): WatchHandle[] {
  return [
    api.watch(kind, {}, (e) => loop.queue.add(objectKey(e.object))),
    api.watch(owned, {}, (e) => {
      if (onOwned) return onOwned(e.object);
      const owner = controllerOf(e.object);
      if (owner?.kind === ownerKind) loop.queue.add(keyOf(e.object.metadata.namespace, owner.name));
    }),
  ];
}

// ReplicaSet -> Pods: keeps spec.replicas active pods from the template (generateName
// "<rs>-", controller ownerReference), adopts matching orphans, deletes the least useful pods
// first when there are too many (unscheduled, pending, not ready, restarting, newest), replaces
// finished pods, and writes status: replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas (ready for minReadySeconds) and observedGeneration.

import type { Clock } from "../../../services/kernel/clock.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import { type KubeObject, keyOf, objectKey, splitKey } from "../../../services/kube/kube-object.ts";
import type { ReconcileLoop, ReconcileOutcome } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { jsonEqual } from "../apiserver/core/json-object.ts";
import { fromStructuredSelector, matchesLabels } from "../apiserver/selectors/label-selector.ts";
import { isPodActive, isPodAvailable, isPodReady, msUntilAvailable } from "../objects/pod-readiness.ts";
import type { Pod } from "../objects/pod-types.ts";
import { PODS, REPLICASETS } from "../objects/refs.ts";
import type { ReplicaSet, ReplicaSetStatus } from "../objects/workload-types.ts";
import { getLive, watchControlled } from "./controlled-objects.ts";
import { type ControllerDeps, controllerLoop } from "./controller.ts";
import { controllerOf, controllerRef, isControlledBy } from "./owner-refs.ts";

export const REPLICASET_MANAGER = "replicaset-controller";

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/** Pods in the order they should go when scaling down (first goes first). */
export function deletionOrder(pods: readonly Pod[]): Pod[] {
  const rank = (p: Pod) => [
    p.spec.nodeName ? 1 : 0,
    PHASE_RANK[p.status?.phase ?? "Pending"] ?? 0,
    isPodReady(p) ? 1 : 0,
    -(p.status?.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0),
    -Date.parse(p.metadata.creationTimestamp ?? "") || 0,
  ];
  return [...pods].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return (ra[i] ?? 0) - (rb[i] ?? 0);
    return (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "");
  });
}

export function podFromTemplate(
  owner: KubeObject,
  template: ReplicaSet["spec"]["template"],
  namePrefix: string,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: `${namePrefix}-`,
      labels: { ...(template.metadata?.labels ?? {}) },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [controllerRef(owner)],
    },
    spec: structuredClone(template.spec),
  };
}

export class ReplicaSetController {
  readonly loop: ReconcileLoop;
  readonly #api: ClusterApi;
  readonly #clock: Clock;
  readonly #events: EventRecorder;
  #watches: WatchHandle[] = [];

  constructor(deps: ControllerDeps) {
    this.#api = deps.api;
    this.#clock = deps.clock;
    this.#events = deps.events;
    this.loop = controllerLoop(REPLICASET_MANAGER, (key) => this.reconcile(key), deps);
  }

  start(): void {
    this.#watches = watchControlled(this.#api, this.loop, REPLICASETS, PODS, "ReplicaSet", (pod) =>
      this.#podChanged(pod),
    );
  }

  stop(): void {
    for (const watch of this.#watches) watch.stop();
    void this.loop.stop();
  }

  #podChanged(pod: KubeObject): void {
    const owner = controllerOf(pod);
    if (owner?.kind === "ReplicaSet") this.loop.queue.add(keyOf(pod.metadata.namespace, owner.name));
    else if (!owner) {
      for (const rs of this.#api.list(REPLICASETS, { namespace: pod.metadata.namespace ?? "" }).items)
        this.loop.queue.add(objectKey(rs));
    }
  }

  reconcile(key: string): ReconcileOutcome | undefined {
    const { namespace, name } = splitKey(key);
    const rs = getLive<ReplicaSet>(this.#api, REPLICASETS, namespace, name);
    if (!rs) return undefined;
    const selector = fromStructuredSelector(rs.spec.selector);
    if (selector.error) return undefined;
    const all = this.#api.list(PODS, { namespace }).items as Pod[];
    const owned = all.filter((p) => isControlledBy(p, rs));
    for (const orphan of all.filter((p) => !controllerOf(p) && !p.metadata.deletionTimestamp)) {
      if (matchesLabels(selector.value, orphan.metadata.labels)) owned.push(this.#adopt(rs, orphan));
    }
    const active = owned.filter(isPodActive);
    for (const finished of owned.filter((p) => !p.metadata.deletionTimestamp && !isPodActive(p)))
      this.#deletePod(rs, finished);
    const desired = rs.spec.replicas ?? 1;
    if (active.length < desired) this.#createPods(rs, desired - active.length);
    else if (active.length > desired)
      for (const pod of deletionOrder(active).slice(0, active.length - desired)) this.#deletePod(rs, pod);
    return this.#writeStatus(rs, active);
  }

  #adopt(rs: ReplicaSet, pod: Pod): Pod {
    const refs = [...(pod.metadata.ownerReferences ?? []), controllerRef(rs)];
    return this.#api.patch(
      PODS,
      pod.metadata.namespace ?? "",
      pod.metadata.name ?? "",
      "merge",
      {
        metadata: { ownerReferences: refs },
      } as never,
      { fieldManager: REPLICASET_MANAGER },
    ) as Pod;
  }

  #createPods(rs: ReplicaSet, count: number): void {
    for (let i = 0; i < count; i++) {
      const pod = this.#api.create(
        PODS,
        rs.metadata.namespace ?? "",
        podFromTemplate(rs, rs.spec.template, rs.metadata.name ?? ""),
        {
          fieldManager: REPLICASET_MANAGER,
        },
      );
      this.#events.record(rs, "Normal", "SuccessfulCreate", `Created pod: ${pod.metadata.name}`);
    }
  }

  #deletePod(rs: ReplicaSet, pod: Pod): void {
    try {
      this.#api.delete(PODS, pod.metadata.namespace ?? "", pod.metadata.name ?? "", {
        preconditions: { uid: pod.metadata.uid ?? "" },
      });
      this.#events.record(rs, "Normal", "SuccessfulDelete", `Deleted pod: ${pod.metadata.name}`);
    } catch (err) {
      if (statusCodeOf(err) !== 404 && statusCodeOf(err) !== 409) throw err;
    }
  }

  #writeStatus(rs: ReplicaSet, active: Pod[]): ReconcileOutcome | undefined {
    const now = this.#clock.now();
    const minReady = rs.spec.minReadySeconds ?? 0;
    const templateLabels = rs.spec.template.metadata?.labels ?? {};
    const status: ReplicaSetStatus = {
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) =>
        Object.entries(templateLabels).every(([k, v]) => p.metadata.labels?.[k] === v),
      ).length,
      readyReplicas: active.filter(isPodReady).length,
      availableReplicas: active.filter((p) => isPodAvailable(p, minReady, now)).length,
      observedGeneration: rs.metadata.generation ?? 1,
    };
    if (!jsonEqual(status, rs.status)) {
      const latest = this.#api.get(REPLICASETS, rs.metadata.namespace ?? "", rs.metadata.name ?? "");
      this.#api.update(
        REPLICASETS,
        rs.metadata.namespace ?? "",
        rs.metadata.name ?? "",
        { ...latest, status },
        {
          subresource: "status",
          fieldManager: REPLICASET_MANAGER,
        },
      );
    }
    const waits = active
      .map((p) => msUntilAvailable(p, minReady, now))
      .filter((ms): ms is number => ms !== undefined && ms > 0);
    return waits.length > 0 ? { requeueAfterMs: Math.min(...waits) } : undefined;
  }
}

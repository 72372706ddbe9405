// StatefulSet -> Pods "<name>-<ordinal>" with stable names, hostname/subdomain, the
// statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index labels, and one volume per
// volumeClaimTemplate (claim "<template>-<pod>", which the kubelet maps to a folder that outlives
// the pod). The revision is "<name>-<hash of the template>" (no ControllerRevision objects: pods
// that must be recreated below the partition get the current template). Ordering and rolling
// updates are planned by statefulset-plan.ts; status carries replicas, readyReplicas,
// availableReplicas, currentReplicas, updatedReplicas and current/update revisions.

import type { Clock } from "../../../services/kernel/clock.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import { type KubeObject, splitKey } from "../../../services/kube/kube-object.ts";
import type { ReconcileLoop, ReconcileOutcome } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { jsonEqual } from "../apiserver/core/json-object.ts";
import { isPodAvailable, isPodReady, msUntilAvailable } from "../objects/pod-readiness.ts";
import type { Pod, Volume } from "../objects/pod-types.ts";
import { PODS, STATEFULSETS } from "../objects/refs.ts";
import type { StatefulSet, StatefulSetStatus } from "../objects/workload-types.ts";
import { getLive, watchControlled } from "./controlled-objects.ts";
import { type ControllerDeps, controllerLoop } from "./controller.ts";
import { controllerRef, isControlledBy } from "./owner-refs.ts";
import { type OrdinalPod, planStatefulSet } from "./statefulset-plan.ts";
import { templateHash } from "./template-hash.ts";

export const STATEFULSET_MANAGER = "statefulset-controller";
export const REVISION_LABEL = "controller-revision-hash";
export const POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name";
export const POD_INDEX_LABEL = "apps.kubernetes.io/pod-index";

export function statefulSetPod(sts: StatefulSet, ordinal: number, revision: string): KubeObject {
  const name = `${sts.metadata.name}-${ordinal}`;
  const template = sts.spec.template;
  const claims: Volume[] = (sts.spec.volumeClaimTemplates ?? []).map((t) => ({
    name: t.metadata?.name ?? "",
    persistentVolumeClaim: { claimName: `${t.metadata?.name ?? ""}-${name}` },
  }));
  const claimNames = new Set(claims.map((c) => c.name));
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      labels: {
        ...(template.metadata?.labels ?? {}),
        [POD_NAME_LABEL]: name,
        [POD_INDEX_LABEL]: String(ordinal),
        [REVISION_LABEL]: revision,
      },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [controllerRef(sts)],
    },
    spec: {
      ...structuredClone(template.spec),
      hostname: name,
      ...(sts.spec.serviceName ? { subdomain: sts.spec.serviceName } : {}),
      volumes: [...(template.spec.volumes ?? []).filter((v) => !claimNames.has(v.name)), ...claims],
    },
  };
}

export class StatefulSetController {
  readonly loop: ReconcileLoop;
  readonly #api: ClusterApi;
  readonly #clock: Clock;
  readonly #events: EventRecorder;
  #watches: WatchHandle[] = [];

  constructor(deps: ControllerDeps) {
    this.#api = deps.api;
    this.#clock = deps.clock;
    this.#events = deps.events;
    this.loop = controllerLoop(STATEFULSET_MANAGER, (key) => this.reconcile(key), deps);
  }

  start(): void {
    this.#watches = watchControlled(this.#api, this.loop, STATEFULSETS, PODS, "StatefulSet");
  }

  stop(): void {
    for (const watch of this.#watches) watch.stop();
    void this.loop.stop();
  }

  reconcile(key: string): ReconcileOutcome | undefined {
    const { namespace, name } = splitKey(key);
    const sts = getLive<StatefulSet>(this.#api, STATEFULSETS, namespace, name);
    if (!sts) return undefined;
    const updateRevision = `${name}-${templateHash(sts.spec.template)}`;
    const pattern = new RegExp(`^${name.replace(/[.]/g, "\\.")}-(\\d+)$`);
    const pods = (this.#api.list(PODS, { namespace }).items as Pod[]).filter(
      (p) => isControlledBy(p, sts) && pattern.test(p.metadata.name ?? ""),
    );
    const ordinalPods: OrdinalPod[] = pods.map((p) => ({
      ordinal: Number(pattern.exec(p.metadata.name ?? "")?.[1]),
      name: p.metadata.name ?? "",
      revision: p.metadata.labels?.[REVISION_LABEL] ?? "",
      ready: isPodReady(p),
      terminating: p.metadata.deletionTimestamp !== undefined,
      failed: p.status?.phase === "Failed" || p.status?.phase === "Succeeded",
    }));
    const strategy = sts.spec.updateStrategy;
    const plan = planStatefulSet({
      replicas: sts.spec.replicas ?? 1,
      parallel: sts.spec.podManagementPolicy === "Parallel",
      rollingUpdate: (strategy?.type ?? "RollingUpdate") === "RollingUpdate",
      partition: strategy?.rollingUpdate?.partition ?? 0,
      updateRevision,
      pods: ordinalPods,
    });
    for (const ordinal of plan.create) {
      this.#api.create(PODS, namespace, statefulSetPod(sts, ordinal, updateRevision), {
        fieldManager: STATEFULSET_MANAGER,
      });
      this.#events.record(
        sts,
        "Normal",
        "SuccessfulCreate",
        `create Pod ${name}-${ordinal} in StatefulSet ${name} successful`,
      );
    }
    for (const podName of plan.delete) {
      try {
        this.#api.delete(PODS, namespace, podName);
        this.#events.record(
          sts,
          "Normal",
          "SuccessfulDelete",
          `delete Pod ${podName} in StatefulSet ${name} successful`,
        );
      } catch (err) {
        if (statusCodeOf(err) !== 404) throw err;
      }
    }
    return this.#writeStatus(sts, pods, updateRevision);
  }

  #writeStatus(sts: StatefulSet, pods: Pod[], updateRevision: string): ReconcileOutcome | undefined {
    const now = this.#clock.now();
    const minReady = sts.spec.minReadySeconds ?? 0;
    const replicas = sts.spec.replicas ?? 1;
    const active = pods.filter((p) => !p.metadata.deletionTimestamp);
    const revisionOf = (p: Pod) => p.metadata.labels?.[REVISION_LABEL];
    let currentRevision = sts.status?.currentRevision || updateRevision;
    const ready = active.filter(isPodReady).length;
    const updated = active.filter((p) => revisionOf(p) === updateRevision).length;
    const rolling = (sts.spec.updateStrategy?.type ?? "RollingUpdate") === "RollingUpdate";
    if (rolling && updated === replicas && ready === replicas && active.length === replicas)
      currentRevision = updateRevision;
    const status: StatefulSetStatus = {
      observedGeneration: sts.metadata.generation ?? 1,
      replicas: active.length,
      readyReplicas: ready,
      availableReplicas: active.filter((p) => isPodAvailable(p, minReady, now)).length,
      currentReplicas: active.filter((p) => revisionOf(p) === currentRevision).length,
      updatedReplicas: updated,
      currentRevision,
      updateRevision,
      collisionCount: 0,
    };
    if (!jsonEqual(status, sts.status)) {
      const latest = this.#api.get(STATEFULSETS, sts.metadata.namespace ?? "", sts.metadata.name ?? "");
      this.#api.update(
        STATEFULSETS,
        sts.metadata.namespace ?? "",
        sts.metadata.name ?? "",
        { ...latest, status },
        {
          subresource: "status",
          fieldManager: STATEFULSET_MANAGER,
        },
      );
    }
    const waits = active
      .map((p) => msUntilAvailable(p, minReady, now))
      .filter((ms): ms is number => !!ms && ms > 0);
    return waits.length > 0 ? { requeueAfterMs: Math.min(...waits) } : undefined;
  }
}

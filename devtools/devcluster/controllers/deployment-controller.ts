// Deployment -> ReplicaSets. Reconcile reads like a script: get the Deployment, observe the
// ReplicaSets it controls, find (or create) the one whose template equals the Deployment's
// ("<name>-<pod-template-hash>"), plan one scaling step (rollout-plan.ts), apply it, prune old
// ReplicaSets beyond revisionHistoryLimit, then write status (deployment-status.ts) if it
// changed. Revisions follow Kubernetes (deployment.kubernetes.io/revision), so `kubectl rollout
// history/undo` work.

import type { Clock } from "../../../services/kernel/clock.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import { type KubeObject, splitKey } from "../../../services/kube/kube-object.ts";
import type { ReconcileLoop, ReconcileOutcome } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { jsonEqual } from "../apiserver/core/json-object.ts";
import type { PodTemplate } from "../objects/pod-types.ts";
import { DEPLOYMENTS, REPLICASETS } from "../objects/refs.ts";
import type { Deployment, ReplicaSet } from "../objects/workload-types.ts";
import { getLive, watchControlled } from "./controlled-objects.ts";
import { type ControllerDeps, controllerLoop } from "./controller.ts";
import { deploymentStatus, msUntilDeadline } from "./deployment-status.ts";
import { controllerRef, isControlledBy } from "./owner-refs.ts";
import {
  planRecreate,
  planRollingUpdate,
  type RsScale,
  type Scaling,
  surgeAndUnavailable,
} from "./rollout-plan.ts";
import { templateHash } from "./template-hash.ts";

export const DEPLOYMENT_MANAGER = "deployment-controller";
export const HASH_LABEL = "pod-template-hash";
export const REVISION = "deployment.kubernetes.io/revision";
const DESIRED = "deployment.kubernetes.io/desired-replicas";
const MAX_REPLICAS = "deployment.kubernetes.io/max-replicas";

export function withoutHash(template: PodTemplate): PodTemplate {
  const labels = { ...(template.metadata?.labels ?? {}) };
  delete labels[HASH_LABEL];
  return { ...template, metadata: { ...template.metadata, labels } };
}

const revisionOf = (rs: KubeObject) => Number(rs.metadata.annotations?.[REVISION] ?? 0) || 0;
const byAge = (a: KubeObject, b: KubeObject) =>
  (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
  (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "");

function scaleOf(rs: ReplicaSet): RsScale {
  return {
    name: rs.metadata.name ?? "",
    replicas: rs.spec.replicas ?? 0,
    current: rs.status?.replicas ?? 0,
    available: rs.status?.availableReplicas ?? 0,
  };
}

export class DeploymentController {
  readonly loop: ReconcileLoop;
  readonly #api: ClusterApi;
  readonly #clock: Clock;
  readonly #events: EventRecorder;
  #watches: WatchHandle[] = [];

  constructor(deps: ControllerDeps) {
    this.#api = deps.api;
    this.#clock = deps.clock;
    this.#events = deps.events;
    this.loop = controllerLoop(DEPLOYMENT_MANAGER, (key) => this.reconcile(key), deps);
  }

  start(): void {
    this.#watches = watchControlled(this.#api, this.loop, DEPLOYMENTS, REPLICASETS, "Deployment");
  }

  stop(): void {
    for (const watch of this.#watches) watch.stop();
    void this.loop.stop();
  }

  reconcile(key: string): ReconcileOutcome | undefined {
    const { namespace, name } = splitKey(key);
    const deployment = getLive<Deployment>(this.#api, DEPLOYMENTS, namespace, name);
    if (!deployment) return undefined;
    const owned = (this.#api.list(REPLICASETS, { namespace }).items as ReplicaSet[])
      .filter((rs) => isControlledBy(rs, deployment))
      .sort(byAge);
    const replicas = deployment.spec.replicas ?? 1;
    const limits = surgeAndUnavailable(replicas, deployment.spec.strategy?.rollingUpdate);
    let newRs = owned.find((rs) =>
      jsonEqual(withoutHash(rs.spec.template), withoutHash(deployment.spec.template)),
    );
    const oldRss = owned.filter((rs) => rs !== newRs);
    let createdNewRs = false;
    if (!deployment.spec.paused) {
      if (!newRs) {
        newRs = this.#createNewRs(deployment, oldRss, limits);
        createdNewRs = true;
      } else newRs = this.#bumpRevision(deployment, newRs, oldRss);
      for (const step of this.#plan(deployment, newRs, oldRss, limits))
        this.#scale(deployment, [newRs, ...oldRss], step);
      this.#pruneHistory(deployment, oldRss);
      this.#syncRevision(deployment, newRs);
    }
    return this.#writeStatus(deployment, newRs, owned, limits.maxUnavailable, createdNewRs);
  }

  #plan(
    deployment: Deployment,
    newRs: ReplicaSet,
    oldRss: ReplicaSet[],
    limits: { maxSurge: number; maxUnavailable: number },
  ): Scaling[] {
    const replicas = deployment.spec.replicas ?? 1;
    const olds = oldRss.map(scaleOf);
    if (deployment.spec.strategy?.type === "Recreate") return planRecreate(replicas, scaleOf(newRs), olds);
    return planRollingUpdate(replicas, limits, scaleOf(newRs), olds);
  }

  #createNewRs(
    deployment: Deployment,
    oldRss: ReplicaSet[],
    limits: { maxSurge: number; maxUnavailable: number },
  ): ReplicaSet {
    const namespace = deployment.metadata.namespace ?? "";
    const template = deployment.spec.template;
    const replicas = deployment.spec.replicas ?? 1;
    const revision = Math.max(0, ...oldRss.map(revisionOf)) + 1;
    const empty: RsScale = { name: "", replicas: 0, current: 0, available: 0 };
    const olds = oldRss.map(scaleOf);
    const first =
      deployment.spec.strategy?.type === "Recreate"
        ? planRecreate(replicas, empty, olds)
        : planRollingUpdate(replicas, limits, empty, olds);
    const initial = first.find((s) => s.name === "")?.to ?? 0;
    for (let collisions = 0; ; collisions++) {
      const hash = templateHash(withoutHash(template), collisions);
      const rsName = `${deployment.metadata.name}-${hash}`;
      const labels = { ...(template.metadata?.labels ?? {}), [HASH_LABEL]: hash };
      const rs: KubeObject = {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: {
          name: rsName,
          labels,
          annotations: {
            [REVISION]: String(revision),
            [DESIRED]: String(replicas),
            [MAX_REPLICAS]: String(replicas + limits.maxSurge),
          },
          ownerReferences: [controllerRef(deployment)],
        },
        spec: {
          replicas: initial,
          minReadySeconds: deployment.spec.minReadySeconds ?? 0,
          selector: {
            ...deployment.spec.selector,
            matchLabels: { ...(deployment.spec.selector.matchLabels ?? {}), [HASH_LABEL]: hash },
          },
          template: { ...template, metadata: { ...template.metadata, labels } },
        },
      };
      try {
        const created = this.#api.create(REPLICASETS, namespace, rs, {
          fieldManager: DEPLOYMENT_MANAGER,
        }) as ReplicaSet;
        this.#events.record(
          deployment,
          "Normal",
          "ScalingReplicaSet",
          `Scaled up replica set ${rsName} to ${initial}`,
        );
        return created;
      } catch (err) {
        if (statusCodeOf(err) !== 409 || collisions >= 5) throw err;
      }
    }
  }

  /** A ReplicaSet that becomes the new one again (rollback) takes the next revision. */
  #bumpRevision(deployment: Deployment, newRs: ReplicaSet, oldRss: ReplicaSet[]): ReplicaSet {
    const highest = Math.max(0, ...oldRss.map(revisionOf));
    if (revisionOf(newRs) > highest) return newRs;
    const annotations = { ...newRs.metadata.annotations, [REVISION]: String(highest + 1) };
    void deployment;
    return this.#api.update(
      REPLICASETS,
      newRs.metadata.namespace ?? "",
      newRs.metadata.name ?? "",
      {
        ...newRs,
        metadata: { ...newRs.metadata, annotations },
      },
      { fieldManager: DEPLOYMENT_MANAGER },
    ) as ReplicaSet;
  }

  #scale(deployment: Deployment, rss: ReplicaSet[], step: Scaling): void {
    const rs = rss.find((r) => r.metadata.name === step.name);
    if (!rs) return;
    const latest = this.#api.get(REPLICASETS, rs.metadata.namespace ?? "", step.name) as ReplicaSet;
    const annotations = { ...latest.metadata.annotations, [DESIRED]: String(deployment.spec.replicas ?? 1) };
    this.#api.update(
      REPLICASETS,
      latest.metadata.namespace ?? "",
      step.name,
      {
        ...latest,
        metadata: { ...latest.metadata, annotations },
        spec: { ...latest.spec, replicas: step.to },
      },
      { fieldManager: DEPLOYMENT_MANAGER },
    );
    const verb = step.to > step.from ? "up" : "down";
    this.#events.record(
      deployment,
      "Normal",
      "ScalingReplicaSet",
      `Scaled ${verb} replica set ${step.name} to ${step.to} from ${step.from}`,
    );
  }

  #pruneHistory(deployment: Deployment, oldRss: ReplicaSet[]): void {
    const limit = deployment.spec.revisionHistoryLimit ?? 10;
    const idle = oldRss.filter((rs) => (rs.spec.replicas ?? 0) === 0 && (rs.status?.replicas ?? 0) === 0);
    for (const rs of idle
      .sort((a, b) => revisionOf(a) - revisionOf(b))
      .slice(0, Math.max(0, idle.length - limit))) {
      try {
        this.#api.delete(REPLICASETS, rs.metadata.namespace ?? "", rs.metadata.name ?? "");
      } catch (err) {
        if (statusCodeOf(err) !== 404) throw err;
      }
    }
  }

  #syncRevision(deployment: Deployment, newRs: ReplicaSet): void {
    const revision = newRs.metadata.annotations?.[REVISION];
    if (!revision || deployment.metadata.annotations?.[REVISION] === revision) return;
    const latest = this.#api.get(
      DEPLOYMENTS,
      deployment.metadata.namespace ?? "",
      deployment.metadata.name ?? "",
    );
    this.#api.update(
      DEPLOYMENTS,
      deployment.metadata.namespace ?? "",
      deployment.metadata.name ?? "",
      {
        ...latest,
        metadata: {
          ...latest.metadata,
          annotations: { ...latest.metadata.annotations, [REVISION]: revision },
        },
      },
      { fieldManager: DEPLOYMENT_MANAGER },
    );
  }

  #writeStatus(
    deployment: Deployment,
    newRs: ReplicaSet | undefined,
    owned: ReplicaSet[],
    maxUnavailable: number,
    createdNewRs: boolean,
  ): ReconcileOutcome | undefined {
    const now = this.#clock.now();
    const allRss =
      newRs && !owned.some((r) => r.metadata.uid === newRs.metadata.uid) ? [...owned, newRs] : owned;
    const status = deploymentStatus({ deployment, newRs, allRss, maxUnavailable, createdNewRs, now });
    if (!jsonEqual(status, deployment.status)) {
      const latest = this.#api.get(
        DEPLOYMENTS,
        deployment.metadata.namespace ?? "",
        deployment.metadata.name ?? "",
      );
      this.#api.update(
        DEPLOYMENTS,
        deployment.metadata.namespace ?? "",
        deployment.metadata.name ?? "",
        { ...latest, status },
        {
          subresource: "status",
          fieldManager: DEPLOYMENT_MANAGER,
        },
      );
    }
    const wait = msUntilDeadline(deployment, status, now);
    return wait === undefined ? undefined : { requeueAfterMs: wait };
  }
}

// The scheduler of the dev cluster: binds each pending pod (no spec.nodeName, default scheduler)
// to the registered node that has room for its requests (cpu, memory, nvidia.com/gpu, pods) and
// matches its nodeSelector, oldest pod first. A pod that fits nowhere gets PodScheduled=False
// (Unschedulable, with the reasons per node) and is tried again whenever pods or nodes change.

import { type Clock, systemClock } from "../../../services/kernel/clock.ts";
import { createLogger, type Logger } from "../../../services/kernel/log.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import { formatTime } from "../../../services/kube/kube-time.ts";
import { ReconcileLoop } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { jsonEqual } from "../apiserver/core/json-object.ts";
import { clusterEventRecorder } from "../objects/cluster-events.ts";
import { isPodActive } from "../objects/pod-readiness.ts";
import type { Pod, PodCondition } from "../objects/pod-types.ts";
import { NODES, PODS } from "../objects/refs.ts";
import { nodeView } from "./node-object.ts";
import { addAmounts, pickNode, type ResourceAmounts, unschedulableMessage } from "./pod-fit.ts";

export const SCHEDULER_NAME = "default-scheduler";

export interface PodSchedulerDeps {
  clock?: Clock;
  log?: Logger;
  events?: EventRecorder;
}

const isPending = (pod: Pod) =>
  !pod.spec.nodeName &&
  !pod.metadata.deletionTimestamp &&
  (pod.spec.schedulerName ?? SCHEDULER_NAME) === SCHEDULER_NAME &&
  isPodActive(pod);

export class PodScheduler {
  readonly #api: ClusterApi;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #events: EventRecorder;
  readonly #loop: ReconcileLoop;
  #watches: WatchHandle[] = [];

  constructor(api: ClusterApi, deps: PodSchedulerDeps = {}) {
    this.#api = api;
    this.#clock = deps.clock ?? systemClock;
    this.#log = deps.log ?? createLogger("devcluster-scheduler");
    this.#events = deps.events ?? clusterEventRecorder(api, this.#clock, SCHEDULER_NAME);
    this.#loop = new ReconcileLoop(SCHEDULER_NAME, () => this.#scheduleLogged(), {
      clock: this.#clock,
      log: this.#log,
    });
  }

  start(): void {
    this.#loop.start();
    const poke = () => this.#loop.queue.add("all");
    this.#watches = [this.#api.watch(PODS, {}, poke), this.#api.watch(NODES, {}, poke)];
  }

  stop(): void {
    for (const watch of this.#watches) watch.stop();
    void this.#loop.stop();
  }

  idle(): Promise<void> {
    return this.#loop.idle();
  }

  get busy(): boolean {
    return this.#loop.busy;
  }

  /** A failed pass is logged; the next pod or node change schedules again. */
  #scheduleLogged(): undefined {
    try {
      this.#scheduleAll();
    } catch (err) {
      this.#log.warn({ err }, "scheduling failed");
    }
    return undefined;
  }

  #scheduleAll(): void {
    const nodes = this.#api.list(NODES).items.map(nodeView);
    const pods = this.#api.list(PODS).items as Pod[];
    const used = new Map<string, ResourceAmounts>();
    for (const node of nodes)
      used.set(node.name, addAmounts(pods.filter((p) => p.spec.nodeName === node.name && isBound(p))));
    const pending = pods
      .filter(isPending)
      .sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""));
    for (const pod of pending) {
      const choice = pickNode(pod, nodes, (name) => used.get(name) ?? {});
      if ("node" in choice) {
        this.#bind(pod, choice.node.name);
        const amounts = addAmounts([pod]);
        const total = used.get(choice.node.name) ?? {};
        for (const [k, v] of Object.entries(amounts)) total[k] = (total[k] ?? 0) + v;
        used.set(choice.node.name, total);
      } else this.#markUnschedulable(pod, unschedulableMessage(nodes.length, choice.reasons));
    }
  }

  #bind(pod: Pod, nodeName: string): void {
    const namespace = pod.metadata.namespace ?? "";
    const name = pod.metadata.name ?? "";
    try {
      this.#api.patch(
        PODS,
        namespace,
        name,
        "merge",
        { spec: { nodeName } },
        { fieldManager: SCHEDULER_NAME },
      );
      this.#setScheduled(namespace, name, { type: "PodScheduled", status: "True" });
      this.#events.record(
        pod,
        "Normal",
        "Scheduled",
        `Successfully assigned ${namespace}/${name} to ${nodeName}`,
      );
    } catch (err) {
      if (statusCodeOf(err) !== 404 && statusCodeOf(err) !== 409) throw err;
    }
  }

  #markUnschedulable(pod: Pod, message: string): void {
    const condition = { type: "PodScheduled", status: "False" as const, reason: "Unschedulable", message };
    const namespace = pod.metadata.namespace ?? "";
    const name = pod.metadata.name ?? "";
    if (this.#setScheduled(namespace, name, condition))
      this.#events.record(pod, "Warning", "FailedScheduling", message);
  }

  /** Sets the PodScheduled condition; returns whether it changed. */
  #setScheduled(namespace: string, name: string, wanted: PodCondition): boolean {
    const pod = this.#api.get(PODS, namespace, name) as Pod;
    const status = pod.status ?? {};
    const conditions = status.conditions ?? [];
    const before = conditions.find((c) => c.type === "PodScheduled");
    const { lastTransitionTime: _t, lastProbeTime: _p, ...comparable } = before ?? { type: "" };
    if (before && jsonEqual(comparable, wanted)) return false;
    const condition: PodCondition = {
      ...wanted,
      lastProbeTime: null,
      lastTransitionTime:
        before?.status === wanted.status && before.lastTransitionTime
          ? before.lastTransitionTime
          : formatTime(this.#clock.now()),
    };
    const next = {
      ...status,
      phase: status.phase ?? "Pending",
      conditions: [...conditions.filter((c) => c !== before), condition],
    };
    this.#api.update(
      PODS,
      namespace,
      name,
      { ...pod, status: next },
      { subresource: "status", fieldManager: SCHEDULER_NAME },
    );
    return true;
  }
}

/** Bound pods hold their resources until they finish (terminating pods still hold them). */
function isBound(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== "Succeeded" && phase !== "Failed";
}

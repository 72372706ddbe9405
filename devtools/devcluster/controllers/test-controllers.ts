// Specs' cluster for the controllers: the in-process API with GC, the built-in controllers on a
// manual clock, and a stand-in for the kubelet that marks pods Running and Ready.
import { createLogger } from "../../../services/kernel/log.ts";
import { discardEvents } from "../../../services/kube/event-recorder.ts";
import { formatTime } from "../../../services/kube/kube-time.ts";
import { testCluster } from "../apiserver/cluster/test-cluster.ts";
import type { Pod } from "../objects/pod-types.ts";
import { PODS } from "../objects/refs.ts";
import { startControllers } from "./controller-manager.ts";

let nextIp = 2;

export function controllerCluster() {
  const cluster = testCluster({ controllers: true });
  const manager = startControllers(cluster.api, {
    clock: cluster.clock,
    log: createLogger("controllers-spec", "silent"),
    events: discardEvents,
  });
  const settle = async () => {
    for (let i = 0; i < 4; i++) {
      await manager.idle();
      await cluster.settle();
    }
  };
  const pods = (namespace = "default") =>
    (cluster.api.list(PODS, { namespace }).items as Pod[]).filter((p) => !p.metadata.deletionTimestamp);
  /** What a kubelet would do: pods without status become Running (and Ready unless told otherwise). */
  const runPods = (ready: (pod: Pod) => boolean = () => true) => {
    for (const pod of cluster.api.list(PODS).items as Pod[]) {
      const wantReady = ready(pod) ? "True" : "False";
      const current = pod.status?.conditions?.find((c) => c.type === "Ready")?.status;
      if (pod.status?.podIP && current === wantReady) continue;
      const time = formatTime(cluster.clock.now());
      cluster.api.update(
        PODS,
        pod.metadata.namespace ?? "",
        pod.metadata.name ?? "",
        {
          ...pod,
          status: {
            phase: "Running",
            podIP: pod.status?.podIP ?? `127.1.0.${nextIp++ % 250}`,
            conditions: [{ type: "Ready", status: wantReady, lastTransitionTime: time }],
          },
        },
        { subresource: "status" },
      );
    }
  };
  /** Finishes pod deletions as a kubelet would once the processes stopped. */
  const reapPods = () => {
    for (const pod of cluster.api.list(PODS).items)
      if (pod.metadata.deletionTimestamp)
        cluster.api.delete(PODS, pod.metadata.namespace ?? "", pod.metadata.name ?? "", {
          gracePeriodSeconds: 0,
        });
  };
  return { ...cluster, manager, settle, pods, runPods, reapPods };
}

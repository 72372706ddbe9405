// A pod's status from its containers' statuses, as a pure function: phase (the kubelet's getPhase),
// conditions (PodScheduled, PodReadyToStartContainers, Initialized, ContainersReady, Ready) whose
// lastTransitionTime only moves when their status does, IPs, start time and QoS class. Conditions
// other components own (readiness gates) are kept.
import { formatTime } from "../../../services/kube/kube-time.ts";
import type {
  ConditionStatus,
  ContainerStatus,
  Pod,
  PodCondition,
  PodPhase,
  PodSpec,
  PodStatus,
} from "../objects/pod-types.ts";

export interface PodRuntime {
  hostIP: string;
  podIP: string;
  startTime: number;
  initStatuses: ContainerStatus[];
  statuses: ContainerStatus[];
  /** Set while the pod could not be started at all (e.g. no pod IP left). */
  failure?: { reason: string; message: string };
}

const OWN = ["PodScheduled", "PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"];

const succeededInit = (s: ContainerStatus) => s.state.terminated?.exitCode === 0;

export function podPhase(spec: PodSpec, runtime: PodRuntime): PodPhase {
  const policy = spec.restartPolicy ?? "Always";
  if (!runtime.initStatuses.every(succeededInit)) {
    const failed = runtime.initStatuses.some((s) => (s.state.terminated?.exitCode ?? 0) !== 0);
    return failed && policy === "Never" ? "Failed" : "Pending";
  }
  let waiting = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const status of runtime.statuses) {
    if (status.state.running) running++;
    else if (status.state.terminated) {
      stopped++;
      if (status.state.terminated.exitCode === 0) succeeded++;
    } else if (status.lastState.terminated) stopped++;
    else waiting++;
  }
  if (waiting > 0) return "Pending";
  if (running > 0) return "Running";
  if (stopped > 0) {
    if (policy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (policy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

export function qosClass(spec: PodSpec): string {
  const containers = [...spec.containers, ...(spec.initContainers ?? [])];
  const resources = containers.map((c) => c.resources ?? {});
  const none = resources.every(
    (r) => Object.keys(r.requests ?? {}).length + Object.keys(r.limits ?? {}).length === 0,
  );
  if (none) return "BestEffort";
  const guaranteed = resources.every((r) =>
    ["cpu", "memory"].every(
      (k) => r.limits?.[k] !== undefined && String(r.requests?.[k] ?? r.limits[k]) === String(r.limits[k]),
    ),
  );
  return guaranteed ? "Guaranteed" : "Burstable";
}

function condition(
  previous: PodCondition[] | undefined,
  type: string,
  status: ConditionStatus,
  now: string,
  detail?: { reason: string; message?: string | undefined },
): PodCondition {
  const before = previous?.find((c) => c.type === type);
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime:
      before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : now,
    ...(detail ? { reason: detail.reason } : {}),
    ...(detail?.message ? { message: detail.message } : {}),
  };
}

const names = (statuses: ContainerStatus[]) => `[${statuses.map((s) => s.name).join(" ")}]`;

export function podStatus(pod: Pod, runtime: PodRuntime, now: number): PodStatus {
  const time = formatTime(now);
  const previous = pod.status?.conditions;
  const phase = runtime.failure ? "Pending" : podPhase(pod.spec, runtime);
  const finished = phase === "Succeeded" || phase === "Failed";
  const incompleteInit = runtime.initStatuses.filter((s) => !succeededInit(s));
  const unready = runtime.statuses.filter((s) => !s.ready);
  const gates = (pod.spec.readinessGates ?? []).filter(
    (g) => previous?.find((c) => c.type === g.conditionType)?.status !== "True",
  );
  const containersReady = unready.length === 0 && !finished;
  const ready = containersReady && gates.length === 0;
  const readyReason = finished
    ? "PodCompleted"
    : unready.length > 0
      ? "ContainersNotReady"
      : "ReadinessGatesNotReady";
  const readyMessage = finished
    ? undefined
    : unready.length > 0
      ? `containers with unready status: ${names(unready)}`
      : `corresponding condition of pod readiness gate "${gates[0]?.conditionType}" does not exist.`;
  const conditions = [
    condition(previous, "PodReadyToStartContainers", runtime.podIP ? "True" : "False", time),
    condition(
      previous,
      "Initialized",
      incompleteInit.length === 0 ? "True" : "False",
      time,
      incompleteInit.length === 0
        ? undefined
        : {
            reason: "ContainersNotInitialized",
            message: `containers with incomplete status: ${names(incompleteInit)}`,
          },
    ),
    condition(
      previous,
      "Ready",
      ready ? "True" : "False",
      time,
      ready ? undefined : { reason: readyReason, message: readyMessage },
    ),
    condition(
      previous,
      "ContainersReady",
      containersReady ? "True" : "False",
      time,
      containersReady
        ? undefined
        : { reason: finished ? "PodCompleted" : "ContainersNotReady", message: readyMessage },
    ),
    condition(previous, "PodScheduled", "True", time),
    ...(previous ?? []).filter((c) => !OWN.includes(c.type)),
  ];
  return {
    phase,
    conditions,
    ...(runtime.failure ? { reason: runtime.failure.reason, message: runtime.failure.message } : {}),
    hostIP: runtime.hostIP,
    hostIPs: [{ ip: runtime.hostIP }],
    ...(runtime.podIP ? { podIP: runtime.podIP, podIPs: [{ ip: runtime.podIP }] } : {}),
    startTime: formatTime(runtime.startTime),
    ...(runtime.initStatuses.length > 0 ? { initContainerStatuses: runtime.initStatuses } : {}),
    containerStatuses: runtime.statuses,
    qosClass: qosClass(pod.spec),
  };
}

// A Deployment's status from its ReplicaSets, as the Kubernetes deployment controller computes it:
// counts summed over the ReplicaSets (updatedReplicas from the new one), and the conditions
// `kubectl rollout status`, `helm --wait` and kstatus read:
//   Available   True MinimumReplicasAvailable once availableReplicas >= replicas - maxUnavailable.
//   Progressing True NewReplicaSetAvailable once the rollout is complete; NewReplicaSetCreated
//               when the new ReplicaSet was just created; ReplicaSetUpdated (lastUpdateTime = now)
//               whenever the rollout made progress; False ProgressDeadlineExceeded once no
//               progress was made for progressDeadlineSeconds; Unknown DeploymentPaused.
import { formatTime } from "../../../services/kube/kube-time.ts";
import type {
  Deployment,
  DeploymentStatus,
  ReplicaSet,
  WorkloadCondition,
} from "../objects/workload-types.ts";

export interface StatusInput {
  deployment: Deployment;
  newRs: ReplicaSet | undefined;
  allRss: readonly ReplicaSet[];
  maxUnavailable: number;
  createdNewRs: boolean;
  now: number;
}

const total = (
  rss: readonly ReplicaSet[],
  pick: (s: NonNullable<ReplicaSet["status"]>) => number | undefined,
) => rss.reduce((sum, rs) => sum + (rs.status ? (pick(rs.status) ?? 0) : 0), 0);

function setCondition(
  conditions: WorkloadCondition[],
  wanted: WorkloadCondition,
  time: string,
): WorkloadCondition[] {
  const current = conditions.find((c) => c.type === wanted.type);
  if (current && current.status === wanted.status && current.reason === wanted.reason) return conditions;
  const lastTransitionTime = current?.status === wanted.status ? (current.lastTransitionTime ?? time) : time;
  return [
    ...conditions.filter((c) => c.type !== wanted.type),
    { ...wanted, lastUpdateTime: time, lastTransitionTime },
  ];
}

/** Whether the rollout advanced between two statuses (more updated/ready/available, fewer old pods). */
export function madeProgress(before: DeploymentStatus | undefined, after: DeploymentStatus): boolean {
  const b = before ?? {};
  const oldBefore = (b.replicas ?? 0) - (b.updatedReplicas ?? 0);
  const oldAfter = (after.replicas ?? 0) - (after.updatedReplicas ?? 0);
  return (
    (after.updatedReplicas ?? 0) > (b.updatedReplicas ?? 0) ||
    oldAfter < oldBefore ||
    (after.readyReplicas ?? 0) > (b.readyReplicas ?? 0) ||
    (after.availableReplicas ?? 0) > (b.availableReplicas ?? 0)
  );
}

export function deploymentStatus(input: StatusInput): DeploymentStatus {
  const { deployment, newRs, allRss, now } = input;
  const time = formatTime(now);
  const replicas = deployment.spec.replicas ?? 1;
  const generation = deployment.metadata.generation ?? 1;
  const counts = {
    replicas: total(allRss, (s) => s.replicas),
    updatedReplicas: newRs ? total([newRs], (s) => s.replicas) : 0,
    readyReplicas: total(allRss, (s) => s.readyReplicas),
    availableReplicas: total(allRss, (s) => s.availableReplicas),
  };
  const status: DeploymentStatus = {
    observedGeneration: generation,
    ...counts,
    unavailableReplicas: Math.max(0, replicas - counts.availableReplicas),
  };
  let conditions = deployment.status?.conditions ?? [];
  conditions = setCondition(
    conditions,
    counts.availableReplicas >= replicas - input.maxUnavailable
      ? {
          type: "Available",
          status: "True",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
        }
      : {
          type: "Available",
          status: "False",
          reason: "MinimumReplicasUnavailable",
          message: "Deployment does not have minimum availability.",
        },
    time,
  );
  conditions = progressing(input, status, conditions, time);
  return { ...status, conditions };
}

function progressing(
  input: StatusInput,
  status: DeploymentStatus,
  conditions: WorkloadCondition[],
  time: string,
): WorkloadCondition[] {
  const { deployment, newRs } = input;
  const replicas = deployment.spec.replicas ?? 1;
  const rsName = newRs?.metadata.name ?? "";
  const current = conditions.find((c) => c.type === "Progressing");
  const set = (status: WorkloadCondition["status"], reason: string, message: string) =>
    setCondition(conditions, { type: "Progressing", status, reason, message }, time);
  if (deployment.spec.paused) return set("Unknown", "DeploymentPaused", "Deployment is paused");
  const complete =
    status.updatedReplicas === replicas &&
    status.replicas === replicas &&
    status.availableReplicas === replicas;
  if (complete)
    return set("True", "NewReplicaSetAvailable", `ReplicaSet "${rsName}" has successfully progressed.`);
  if (input.createdNewRs) return set("True", "NewReplicaSetCreated", `Created new replica set "${rsName}"`);
  const resumed = current !== undefined && current.status === "Unknown";
  if (!current || resumed || madeProgress(deployment.status, status)) {
    // Progress moves lastUpdateTime even when the reason stays the same.
    const lastTransitionTime = current?.status === "True" ? (current.lastTransitionTime ?? time) : time;
    return [
      ...conditions.filter((c) => c.type !== "Progressing"),
      {
        type: "Progressing",
        status: "True",
        reason: "ReplicaSetUpdated",
        message: `ReplicaSet "${rsName}" is progressing.`,
        lastUpdateTime: time,
        lastTransitionTime,
      },
    ];
  }
  const deadline = (deployment.spec.progressDeadlineSeconds ?? 600) * 1000;
  const last = Date.parse(current.lastUpdateTime ?? "");
  if (
    current.status === "True" &&
    current.reason !== "NewReplicaSetAvailable" &&
    last + deadline <= input.now
  )
    return set("False", "ProgressDeadlineExceeded", `ReplicaSet "${rsName}" has timed out progressing.`);
  return conditions;
}

/** Milliseconds until the progress deadline of an unfinished rollout passes (undefined when none is running). */
export function msUntilDeadline(
  deployment: Deployment,
  status: DeploymentStatus,
  now: number,
): number | undefined {
  const current = status.conditions?.find((c) => c.type === "Progressing");
  if (current?.status !== "True" || current.reason === "NewReplicaSetAvailable") return undefined;
  const last = Date.parse(current.lastUpdateTime ?? "");
  if (!Number.isFinite(last)) return undefined;
  return Math.max(0, last + (deployment.spec.progressDeadlineSeconds ?? 600) * 1000 - now) + 1_000;
}

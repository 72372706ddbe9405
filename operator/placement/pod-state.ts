// What the operator reads back from a worker pod: its shard identity (labels) and its state.
import { LABELS } from "../../services/api/group.ts";
import { ROLES, type Role } from "../../services/api/inference-model-status.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import type { PodGroup, ShardAssignment } from "./planner.ts";
import { GROUP_SIZE_ANNOTATION } from "./pod-template.ts";

export interface ObservedPod {
  name: string;
  role: Role;
  replica: number;
  stage: number;
  rank: number;
  revision: string;
  groupSize: number;
  podIP?: string;
  /** Running, the Ready condition true, not terminating. */
  ready: boolean;
  /** Phase Failed: its containers stopped and will not restart. */
  failed: boolean;
  /** A container restarted (a gang of several pods is restarted whole). */
  restarted: boolean;
  terminating: boolean;
}

interface PodStatus {
  phase?: string;
  podIP?: string;
  conditions?: { type?: string; status?: string }[];
  containerStatuses?: { restartCount?: number }[];
}

const int = (text: string | undefined) =>
  text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;

/** undefined when the pod lacks the operator's labels (not one of its shards). */
export function observePod(pod: KubeObject): ObservedPod | undefined {
  const labels = pod.metadata.labels ?? {};
  const role = labels[LABELS.role] as Role | undefined;
  const replica = int(labels[LABELS.replica]);
  const stage = int(labels[LABELS.stage]);
  const rank = int(labels[LABELS.rank]);
  const revision = labels[LABELS.revision];
  const groupSize = int(pod.metadata.annotations?.[GROUP_SIZE_ANNOTATION]) ?? 1;
  if (
    !role ||
    !ROLES.includes(role) ||
    replica === undefined ||
    stage === undefined ||
    rank === undefined ||
    !revision
  )
    return undefined;
  const status = (pod["status"] ?? {}) as PodStatus;
  const terminating = pod.metadata.deletionTimestamp !== undefined;
  const readyCondition = status.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
  return {
    name: pod.metadata.name ?? "",
    role,
    replica,
    stage,
    rank,
    revision,
    groupSize,
    ...(status.podIP ? { podIP: status.podIP } : {}),
    ready: readyCondition && status.phase === "Running" && !terminating,
    failed: status.phase === "Failed",
    restarted: (status.containerStatuses ?? []).some((c) => (c.restartCount ?? 0) > 0),
    terminating,
  };
}

export function groupKey(role: Role, replica: number): string {
  return `${role}/${replica}`;
}

/** A pod just created from the plan, before anything was observed of it. */
export function plannedPod(group: PodGroup, shard: ShardAssignment): ObservedPod {
  return {
    name: shard.podName,
    role: group.role,
    replica: group.replica,
    stage: shard.stage,
    rank: shard.rank,
    revision: group.revision,
    groupSize: shard.worldSize,
    ready: false,
    failed: false,
    restarted: false,
    terminating: false,
  };
}

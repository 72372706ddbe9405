// Rollout: which pods to create and delete to move the observed pods towards the plan (pure).
//
// - Pods of a group the plan no longer has (scaled down, role gone) are deleted.
// - A pod name still present (even terminating) is never created again until it is gone, so a
//   restarted operator or a stale cache cannot duplicate a pod.
// - Gang restart: when a pod of a group failed (phase Failed), or a pod of a multi-pod group
//   restarted a container (its peers lost their partner), the whole group is deleted; the next
//   reconcile, once they are gone, creates it again.
// - Rolling update: a replica whose pods run an older revision is replaced one replica at a time
//   per role. With surge room in the pool the new group starts beside the old one, which is
//   deleted once every new pod is Ready (no serving gap); without room the old group goes first.
//   An old group that does not serve anyway (incomplete or not Ready) is replaced at once.
import type { Role } from "../../services/api/inference-model-status.ts";
import type { PlacementPlan, PodGroup, ShardAssignment } from "./planner.ts";
import { groupKey, type ObservedPod } from "./pod-state.ts";

export type DeleteReason = "ScaledDown" | "Outdated" | "GroupFailed";

export interface RolloutActions {
  create: { group: PodGroup; shard: ShardAssignment }[];
  delete: { name: string; reason: DeleteReason }[];
}

/** The revision whose pods form a complete, all-Ready group, if any. */
export function servingRevision(pods: readonly ObservedPod[]): string | undefined {
  const byRevision = new Map<string, ObservedPod[]>();
  for (const pod of pods) byRevision.set(pod.revision, [...(byRevision.get(pod.revision) ?? []), pod]);
  for (const [revision, group] of byRevision) {
    const size = group[0]?.groupSize ?? 0;
    if (group.length === size && group.every((p) => p.ready)) return revision;
  }
  return undefined;
}

export function planRollout(plan: PlacementPlan, observed: readonly ObservedPod[]): RolloutActions {
  const actions: RolloutActions = { create: [], delete: [] };
  const existing = new Set(observed.map((p) => p.name));
  const live = observed.filter((p) => !p.terminating);
  const wanted = new Map(plan.groups.map((g) => [groupKey(g.role, g.replica), g]));
  for (const pod of live)
    if (!wanted.has(groupKey(pod.role, pod.replica)))
      actions.delete.push({ name: pod.name, reason: "ScaledDown" });

  const roles = [...new Set(plan.groups.map((g) => g.role))];
  for (const role of roles) rollRole(role, plan, live, existing, actions);
  return actions;
}

function rollRole(
  role: Role,
  plan: PlacementPlan,
  live: readonly ObservedPod[],
  existing: ReadonlySet<string>,
  actions: RolloutActions,
): void {
  const groups = plan.groups.filter((g) => g.role === role);
  const podsOf = (g: PodGroup) => live.filter((p) => p.role === role && p.replica === g.replica);
  const create = (g: PodGroup) => {
    for (const shard of g.shards) if (!existing.has(shard.podName)) actions.create.push({ group: g, shard });
  };
  const remove = (pods: readonly ObservedPod[], reason: DeleteReason) => {
    for (const pod of pods) actions.delete.push({ name: pod.name, reason });
  };

  const rolling: { group: PodGroup; current: ObservedPod[]; old: ObservedPod[] }[] = [];
  for (const group of groups) {
    const pods = podsOf(group);
    const current = pods.filter((p) => p.revision === group.revision);
    const old = pods.filter((p) => p.revision !== group.revision);
    const multiPod = group.shards.length > 1;
    if (current.some((p) => p.failed || (multiPod && p.restarted))) {
      remove(current, "GroupFailed");
      continue;
    }
    if (old.length === 0) {
      create(group);
      continue;
    }
    const serving = servingRevision(old);
    if (serving === undefined) {
      remove(old, "Outdated");
      create(group);
      continue;
    }
    remove(
      old.filter((p) => p.revision !== serving),
      "Outdated",
    );
    rolling.push({ group, current, old: old.filter((p) => p.revision === serving) });
  }

  // One replica at a time: those already started first, then the lowest replica index.
  rolling.sort(
    (a, b) =>
      Number(b.current.length > 0) - Number(a.current.length > 0) || a.group.replica - b.group.replica,
  );
  const surge = plan.surgeRoom[role] === true;
  for (const [i, { group, current, old }] of rolling.entries()) {
    const inProgress = current.length > 0;
    if (i > 0 && !inProgress) continue;
    if (!inProgress && !surge) {
      remove(old, "Outdated");
      create(group);
      continue;
    }
    create(group);
    const newReady = current.length === group.shards.length && current.every((p) => p.ready);
    if (newReady) remove(old, "Outdated");
  }
}

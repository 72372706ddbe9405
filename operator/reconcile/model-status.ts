// InferenceModel status from the plan and the observed pods (pure): replica counts with gang
// readiness (a replica is Ready only when every pod of its group is), the shard registry the router
// reads, the router's endpoint, and the conditions (Ready needs a ready replica whose entry worker serves
// the model's served name, and an available router).
import { LABELS, WORKER_GRPC_PORT } from "../../services/api/group.ts";
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import type { InferenceModelStatus, Role, Shard } from "../../services/api/inference-model-status.ts";
import type { PlacementPlan, Shortfall } from "../placement/planner.ts";
import type { ObservedPod } from "../placement/pod-state.ts";
import { type RolloutActions, servingRevision } from "../placement/rollout.ts";
import { type ConditionState, withTransitions } from "./conditions.ts";
import type { RouterState } from "./router-apply.ts";
import { type ServedNamesByPod, servedNameProblem } from "./served-names.ts";

export interface StatusInput {
  name: string;
  generation: number;
  spec: InferenceModelSpec;
  plan: PlacementPlan;
  observed: readonly ObservedPod[];
  actions: RolloutActions;
  previous: InferenceModelStatus | undefined;
  now: string;
  /** The model's router; undefined leaves it out of status and of readiness. */
  router?: RouterState | undefined;
  /** What the ready entry pods said they serve (served-names.ts); undefined leaves it out of readiness. */
  servedNames?: ServedNamesByPod | undefined;
}

interface RoleCounts {
  replicas: number;
  ready: number;
  updated: number;
  wanted: number;
}

export function mainRole(spec: InferenceModelSpec): Role {
  return spec.serving.mode === "colocated" ? "both" : "decode";
}

function countRole(
  role: Role,
  wanted: number,
  plan: PlacementPlan,
  live: readonly ObservedPod[],
): RoleCounts {
  const byReplica = new Map<number, ObservedPod[]>();
  for (const pod of live.filter((p) => p.role === role))
    byReplica.set(pod.replica, [...(byReplica.get(pod.replica) ?? []), pod]);
  const revision = plan.revisions[role];
  let ready = 0;
  let updated = 0;
  for (const pods of byReplica.values()) {
    if (servingRevision(pods) !== undefined) ready++;
    if (pods.filter((p) => p.revision === revision).length === plan.podsPerGroup) updated++;
  }
  return { replicas: byReplica.size, ready, updated, wanted };
}

export function shardsOf(live: readonly ObservedPod[]): Shard[] {
  return [...live]
    .sort(
      (a, b) =>
        a.role.localeCompare(b.role) ||
        a.replica - b.replica ||
        a.revision.localeCompare(b.revision) ||
        a.stage - b.stage ||
        a.rank - b.rank,
    )
    .map((p) => ({
      role: p.role,
      replica: p.replica,
      stage: p.stage,
      rank: p.rank,
      pod: p.name,
      ...(p.podIP ? { endpoint: `${p.podIP}:${WORKER_GRPC_PORT}` } : {}),
      ready: p.ready,
      entry: p.stage === 0 && p.rank === 0,
      revision: p.revision,
    }));
}

function shortfallMessage(s: Shortfall): string {
  return s.reason === "PoolNotFound"
    ? `WorkerPool "${s.pool}" (role ${s.role}) does not exist`
    : `WorkerPool "${s.pool}" has room for ${s.placed} of ${s.wanted} ${s.role} replicas`;
}

function degraded(plan: PlacementPlan, actions: RolloutActions): ConditionState {
  const failed = actions.delete.filter((d) => d.reason === "GroupFailed").map((d) => d.name);
  const [first] = plan.shortfalls;
  if (first)
    return {
      type: "Degraded",
      status: "True",
      reason: first.reason,
      message: plan.shortfalls.map(shortfallMessage).join("; "),
    };
  if (failed.length > 0)
    return {
      type: "Degraded",
      status: "True",
      reason: "PodFailed",
      message: `restarting the groups of failed pods: ${failed.join(", ")}`,
    };
  return { type: "Degraded", status: "False", reason: "AsExpected", message: "" };
}

function progressing(
  counts: RoleCounts[],
  live: readonly ObservedPod[],
  plan: PlacementPlan,
  actions: RolloutActions,
): ConditionState {
  const outdated = live.some((p) => p.revision !== plan.revisions[p.role]);
  const updated = counts.reduce((n, c) => n + c.updated, 0);
  const wanted = counts.reduce((n, c) => n + Math.min(c.wanted, c.replicas), 0);
  const p = (reason: string, message: string): ConditionState => ({
    type: "Progressing",
    status: "True",
    reason,
    message,
  });
  if (outdated) return p("RollingOut", `${updated} of ${wanted} replicas updated`);
  if (actions.create.length > 0) return p("CreatingPods", `creating ${actions.create.length} pods`);
  if (actions.delete.length > 0) return p("DeletingPods", `deleting ${actions.delete.length} pods`);
  if (live.some((pod) => !pod.ready))
    return p("WaitingForPods", `${live.filter((pod) => !pod.ready).length} pods not Ready yet`);
  return {
    type: "Progressing",
    status: "False",
    reason: "Converged",
    message: "every pod runs the current revision",
  };
}

/** The name clients send: spec.model.servedName, else the model's own name (never the folder's). */
export function servedName(spec: InferenceModelSpec, name: string): string {
  return spec.model.servedName ?? name;
}

function ready(
  input: StatusInput,
  live: readonly ObservedPod[],
  main: RoleCounts,
  prefill: RoleCounts | undefined,
): ConditionState {
  const { spec, router, servedNames } = input;
  const r = (status: "True" | "False", reason: string, message: string): ConditionState => ({
    type: "Ready",
    status,
    reason,
    message,
  });
  const summary = `${main.ready}/${main.wanted} replicas ready${prefill ? `, ${prefill.ready}/${prefill.wanted} prefill` : ""}`;
  if (spec.replicas === 0) return r("False", "ScaledToZero", "spec.replicas is 0");
  if (main.ready === 0) return r("False", "NoReplicaReady", summary);
  if (prefill && prefill.ready === 0) return r("False", "NoPrefillReplicaReady", summary);
  if (servedNames) {
    const expected = servedName(spec, input.name);
    for (const role of prefill ? [mainRole(spec), "prefill" as const] : [mainRole(spec)]) {
      const problem = servedNameProblem(expected, role, live, servedNames);
      if (problem) return r("False", problem.reason, problem.message);
    }
  }
  if (router && !router.available)
    return r("False", "RouterNotAvailable", `${summary}, router not available`);
  return r("True", "ReplicasReady", summary);
}

export function modelStatus(input: StatusInput): InferenceModelStatus {
  const { spec, plan } = input;
  const live = input.observed.filter((p) => !p.terminating);
  const role = mainRole(spec);
  const main = countRole(role, spec.replicas, plan, live);
  const prefill =
    spec.serving.mode === "disaggregated"
      ? countRole("prefill", spec.serving.prefillReplicas, plan, live)
      : undefined;
  const conditions = withTransitions(
    [
      ready(input, live, main, prefill),
      progressing(prefill ? [main, prefill] : [main], live, plan, input.actions),
      degraded(plan, input.actions),
    ],
    input.previous?.conditions,
    input.generation,
    input.now,
  );
  const revision = plan.revisions[role];
  return {
    observedGeneration: input.generation,
    ...(revision ? { revision } : {}),
    servedName: servedName(spec, input.name),
    replicas: main.replicas,
    readyReplicas: main.ready,
    updatedReplicas: main.updated,
    ...(prefill ? { prefillReplicas: prefill.replicas, readyPrefillReplicas: prefill.ready } : {}),
    selector: `${LABELS.model}=${input.name}`,
    ...(input.router ? { routerEndpoint: input.router.endpoint } : {}),
    shards: shardsOf(live),
    conditions,
  };
}

/** Status of a model whose spec the operator cannot read (only conditions change). */
export function invalidSpecStatus(
  previous: InferenceModelStatus | undefined,
  generation: number,
  message: string,
  now: string,
): InferenceModelStatus {
  const conditions = withTransitions(
    [
      {
        type: "Ready",
        status: previous?.readyReplicas ? "True" : "False",
        reason: previous?.readyReplicas ? "ReplicasReady" : "InvalidSpec",
        message: "",
      },
      { type: "Progressing", status: "False", reason: "InvalidSpec", message },
      { type: "Degraded", status: "True", reason: "InvalidSpec", message },
    ],
    previous?.conditions,
    generation,
    now,
  );
  return { ...previous, observedGeneration: generation, conditions };
}

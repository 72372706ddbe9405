// The placement planner: model x pools -> pod groups. Pure; the reconciler feeds it what it
// observed and applies what it returns.
//
// Algorithm
// 1. Roles. A colocated model has one role, `both`, with spec.replicas replicas. A disaggregated
//    model has `decode` (spec.replicas) and `prefill` (serving.prefillReplicas). Each role runs in
//    its pool: pools.prefill / pools.decode, else pools.default.
// 2. Groups. Every replica of a role is a gang of pipeline x tensor pods. Pod (stage s, rank t) has
//    global rank s * tensor + t; stage s serves the layers splitLayers(numLayers, pipeline)[s]
//    (unknown when model.numLayers is unset, which the CRD allows only for pipeline = 1). Every pod
//    is told the whole group by global rank: the stable DNS names of its peers (hostname +
//    the model's headless Service), so a group can wire itself up before any pod has an IP.
// 3. Revision. A role's revision hashes everything that shapes its pods except replica counts and
//    routing (revision.ts). Names are `<model>-<role>-<replica>-s<stage>-t<rank>-<revision>`:
//    deterministic, so re-planning after a restart finds the same pods instead of duplicating them,
//    and a new revision gets new names, so the replacement can run beside the old group.
// 4. Capacity. A pool allows maxPods pods over all models; this model may use what the others
//    leave. Groups are placed whole (gang): one group at a time, taking the roles in turn (decode,
//    prefill, both) so a tight pool still gets one replica of each role before a second of any.
//    A role whose pool does not exist places nothing. What could not be placed is a shortfall.
// 5. Surge. A role has surge room when its pool still fits one more group after placement: its
//    rollout may then start a new group before stopping the old one (see rollout.ts).

import { WORKER_GRPC_PORT } from "../../services/api/group.ts";
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import type { Role } from "../../services/api/inference-model-status.ts";
import type { WorkerPoolSpec } from "../../services/api/worker-pool.ts";
import { type LayerRange, splitLayers } from "./layer-ranges.ts";
import { shortHash } from "./revision.ts";

export interface ModelRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface PoolView {
  spec: WorkerPoolSpec;
  /** Pods of other models in the pool (this model's own pods do not count against it). */
  podsUsedByOthers: number;
}

export interface PlacementInput {
  model: ModelRef;
  spec: InferenceModelSpec;
  /** The pools that exist, by name. */
  pools: ReadonlyMap<string, PoolView>;
}

export interface ShardAssignment {
  stage: number;
  rank: number;
  /** stage * tensor + rank */
  globalRank: number;
  numStages: number;
  tensorSize: number;
  worldSize: number;
  layers?: LayerRange;
  podName: string;
  hostname: string;
  /** host:port of every pod of the group, by global rank (this pod included). */
  peers: string[];
}

export interface PodGroup {
  role: Role;
  replica: number;
  revision: string;
  pool: string;
  shards: ShardAssignment[];
}

export type ShortfallReason = "PoolNotFound" | "InsufficientCapacity";

export interface Shortfall {
  role: Role;
  pool: string;
  wanted: number;
  placed: number;
  reason: ShortfallReason;
}

export interface PlacementPlan {
  groups: PodGroup[];
  podsPerGroup: number;
  revisions: Partial<Record<Role, string>>;
  /** Roles whose pool fits one more group beside the placed ones. */
  surgeRoom: Partial<Record<Role, boolean>>;
  shortfalls: Shortfall[];
}

interface RoleWant {
  role: Role;
  pool: string;
  wanted: number;
}

export function rolesOf(spec: InferenceModelSpec): RoleWant[] {
  if (spec.serving.mode === "colocated")
    return [{ role: "both", pool: spec.pools.default, wanted: spec.replicas }];
  return [
    { role: "decode", pool: spec.pools.decode ?? spec.pools.default, wanted: spec.replicas },
    { role: "prefill", pool: spec.pools.prefill ?? spec.pools.default, wanted: spec.serving.prefillReplicas },
  ];
}

export function headlessServiceName(model: string): string {
  return `${model}-workers`;
}

/**
 * What a role's pods are made of, apart from replica identity: the revision's input. The served name
 * shapes the pods (TESSERA_MODEL_NAME), so a new one rolls them; spelling out the default (the model's
 * own name) is the same pods, and hashes as if it were left out. So does quantization none, the
 * default of a field added later: models made before it keep their revision (no roll on upgrade).
 */
export function templateInput(
  model: { name: string },
  spec: InferenceModelSpec,
  role: Role,
  pool: WorkerPoolSpec,
): unknown {
  const { replicas: _replicas, routing: _routing, serving, ...shaping } = spec;
  const { servedName, quantization, ...unnamed } = spec.model;
  const source = quantization === "none" ? unnamed : { ...unnamed, quantization };
  const named = { ...shaping, model: servedName === model.name ? source : { ...source, servedName } };
  return { role, mode: serving.mode, spec: named, pool };
}

export function planPlacement(input: PlacementInput): PlacementPlan {
  const { spec } = input;
  const podsPerGroup = spec.parallelism.pipeline * spec.parallelism.tensor;
  const wants = rolesOf(spec);
  const left = new Map<string, number>();
  for (const [name, pool] of input.pools)
    left.set(name, Math.max(0, pool.spec.maxPods - pool.podsUsedByOthers));

  const placed = new Map<Role, number>(wants.map((w) => [w.role, 0]));
  for (let more = true; more; ) {
    more = false;
    for (const want of wants) {
      const room = left.get(want.pool);
      const count = placed.get(want.role) ?? 0;
      if (room === undefined || count >= want.wanted || room < podsPerGroup) continue;
      left.set(want.pool, room - podsPerGroup);
      placed.set(want.role, count + 1);
      more = true;
    }
  }

  const plan: PlacementPlan = { groups: [], podsPerGroup, revisions: {}, surgeRoom: {}, shortfalls: [] };
  for (const want of wants) {
    const pool = input.pools.get(want.pool);
    const count = placed.get(want.role) ?? 0;
    if (count < want.wanted) {
      const reason = pool ? "InsufficientCapacity" : "PoolNotFound";
      plan.shortfalls.push({ role: want.role, pool: want.pool, wanted: want.wanted, placed: count, reason });
    }
    if (!pool) continue;
    const revision = shortHash(templateInput(input.model, spec, want.role, pool.spec));
    plan.revisions[want.role] = revision;
    plan.surgeRoom[want.role] = (left.get(want.pool) ?? 0) >= podsPerGroup;
    for (let replica = 0; replica < count; replica++)
      plan.groups.push({
        role: want.role,
        replica,
        revision,
        pool: want.pool,
        shards: groupShards(input.model, spec, want.role, replica, revision),
      });
  }
  return plan;
}

function groupShards(
  model: ModelRef,
  spec: InferenceModelSpec,
  role: Role,
  replica: number,
  revision: string,
): ShardAssignment[] {
  const { pipeline, tensor } = spec.parallelism;
  const layers = spec.model.numLayers === undefined ? undefined : splitLayers(spec.model.numLayers, pipeline);
  const domain = `${headlessServiceName(model.name)}.${model.namespace}.svc`;
  const hostnames: string[] = [];
  for (let stage = 0; stage < pipeline; stage++)
    for (let rank = 0; rank < tensor; rank++)
      hostnames.push(`${role}-${replica}-s${stage}-t${rank}-${revision}`);
  const peers = hostnames.map((host) => `${host}.${domain}:${WORKER_GRPC_PORT}`);
  return hostnames.map((hostname, globalRank) => {
    const stage = Math.floor(globalRank / tensor);
    const range = layers?.[stage];
    return {
      stage,
      rank: globalRank % tensor,
      globalRank,
      numStages: pipeline,
      tensorSize: tensor,
      worldSize: pipeline * tensor,
      ...(range ? { layers: range } : {}),
      podName: `${model.name}-${hostname}`,
      hostname,
      peers,
    };
  });
}

import assert from "node:assert/strict";
import { MODEL_REF, modelSpec, pools } from "../testing/fixtures.ts";
import { type PlacementPlan, planPlacement } from "./planner.ts";
import type { ObservedPod } from "./pod-state.ts";
import { planRollout, type RolloutActions } from "./rollout.ts";

function plan(spec: Parameters<typeof modelSpec>[0] = {}, maxPods = 64): PlacementPlan {
  return planPlacement({ model: MODEL_REF, spec: modelSpec(spec), pools: pools({ default: { maxPods } }) });
}

/** The pods of a plan's groups as observed, in a given state (optionally only some replicas). */
function podsOf(p: PlacementPlan, state: Partial<ObservedPod> = {}, replicas?: number[]): ObservedPod[] {
  return p.groups
    .filter((g) => replicas === undefined || replicas.includes(g.replica))
    .flatMap((g) =>
      g.shards.map((s) => ({
        name: s.podName,
        role: g.role,
        replica: g.replica,
        stage: s.stage,
        rank: s.rank,
        revision: g.revision,
        groupSize: s.worldSize,
        ready: true,
        failed: false,
        restarted: false,
        terminating: false,
        ...state,
      })),
    );
}

const show = (a: RolloutActions) => ({
  create: a.create.map((c) => c.shard.podName),
  delete: a.delete.map((d) => `${d.name}:${d.reason}`),
});

describe("rollout", () => {
  const v1 = plan({ replicas: 3 });
  const v2 = plan({ replicas: 3, engine: { blockSize: 32 } });
  const names = (p: PlacementPlan, replicas: number[]) =>
    p.groups.filter((g) => replicas.includes(g.replica)).flatMap((g) => g.shards.map((s) => s.podName));

  it("creates every pod of a new model and nothing once they run", () => {
    assert.deepEqual(show(planRollout(v1, [])), { create: names(v1, [0, 1, 2]), delete: [] });
    assert.deepEqual(show(planRollout(v1, podsOf(v1))), { create: [], delete: [] });
  });

  it("deletes the groups of replicas scaled away", () => {
    const one = plan({ replicas: 1 });
    assert.deepEqual(
      show(planRollout(one, podsOf(v1))).delete,
      names(v1, [1, 2]).map((n) => `${n}:ScaledDown`),
    );
  });

  it("never recreates a pod whose name is still terminating", () => {
    const observed = podsOf(v1, { terminating: true, ready: false }, [0]);
    assert.deepEqual(show(planRollout(v1, observed)), { create: names(v1, [1, 2]), delete: [] });
  });

  it("restarts a gang whose pod failed, or whose multi-pod peer restarted", () => {
    const failed = podsOf(v1).map((p) => (p.replica === 1 ? { ...p, failed: true, ready: false } : p));
    assert.deepEqual(
      show(planRollout(v1, failed)).delete,
      names(v1, [1]).map((n) => `${n}:GroupFailed`),
    );
    const restartedSingle = podsOf(v1, { restarted: true });
    assert.deepEqual(show(planRollout(v1, restartedSingle)), { create: [], delete: [] });
    const tp = plan({ replicas: 1, parallelism: { tensor: 2 } });
    const restartedPeer = podsOf(tp).map((p, i) => (i === 1 ? { ...p, restarted: true } : p));
    assert.deepEqual(
      show(planRollout(tp, restartedPeer)).delete,
      names(tp, [0]).map((n) => `${n}:GroupFailed`),
    );
  });

  it("rolls one replica at a time with surge: new group first, old one deleted once the new is Ready", () => {
    const old = podsOf(v1);
    assert.deepEqual(show(planRollout(v2, old)), { create: names(v2, [0]), delete: [] });
    const starting = [...old, ...podsOf(v2, { ready: false }, [0])];
    assert.deepEqual(show(planRollout(v2, starting)), { create: [], delete: [] });
    const newReady = [...old, ...podsOf(v2, {}, [0])];
    assert.deepEqual(show(planRollout(v2, newReady)), {
      create: [],
      delete: names(v1, [0]).map((n) => `${n}:Outdated`),
    });
    const replicaZeroDone = [...podsOf(v1, {}, [1, 2]), ...podsOf(v2, {}, [0])];
    assert.deepEqual(show(planRollout(v2, replicaZeroDone)), { create: names(v2, [1]), delete: [] });
  });

  it("rolls without surge room by stopping the old group first", () => {
    const full1 = plan({ replicas: 3 }, 3);
    const full2 = plan({ replicas: 3, engine: { blockSize: 32 } }, 3);
    assert.equal(full2.surgeRoom.both, false);
    assert.deepEqual(show(planRollout(full2, podsOf(full1))), {
      create: names(full2, [0]),
      delete: names(full1, [0]).map((n) => `${n}:Outdated`),
    });
  });

  it("replaces at once every old group that does not serve anyway", () => {
    const notReady = podsOf(v1, { ready: false });
    assert.deepEqual(show(planRollout(v2, notReady)), {
      create: names(v2, [0, 1, 2]),
      delete: names(v1, [0, 1, 2]).map((n) => `${n}:Outdated`),
    });
  });
});

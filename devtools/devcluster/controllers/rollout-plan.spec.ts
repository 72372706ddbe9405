import assert from "node:assert/strict";
import {
  planRecreate,
  planRollingUpdate,
  type RsScale,
  resolveIntOrPercent,
  surgeAndUnavailable,
} from "./rollout-plan.ts";

const rs = (name: string, replicas: number, available = replicas, current = replicas): RsScale => ({
  name,
  replicas,
  current,
  available,
});

describe("rollout-plan", () => {
  it("resolves ints and percentages like Kubernetes (surge rounds up, unavailable down)", () => {
    assert.equal(resolveIntOrPercent("25%", 3, true, "25%"), 1);
    assert.equal(resolveIntOrPercent("25%", 3, false, "25%"), 0);
    assert.equal(resolveIntOrPercent(2, 3, false, "25%"), 2);
    assert.equal(resolveIntOrPercent(undefined, 4, false, "25%"), 1);
    assert.deepEqual(surgeAndUnavailable(3, {}), { maxSurge: 1, maxUnavailable: 0 });
    assert.deepEqual(surgeAndUnavailable(3, { maxSurge: 0, maxUnavailable: 0 }), {
      maxSurge: 0,
      maxUnavailable: 1,
    });
    assert.deepEqual(surgeAndUnavailable(2, { maxSurge: 0, maxUnavailable: 5 }), {
      maxSurge: 0,
      maxUnavailable: 2,
    });
  });

  it("scales a brand-new ReplicaSet straight to replicas", () => {
    assert.deepEqual(planRollingUpdate(3, { maxSurge: 1, maxUnavailable: 0 }, rs("new", 0, 0), []), [
      { name: "new", from: 0, to: 3 },
    ]);
  });

  it("walks a rolling update with maxSurge=1, maxUnavailable=0 one pod at a time", () => {
    const limits = { maxSurge: 1, maxUnavailable: 0 };
    // Surge one new pod.
    assert.deepEqual(planRollingUpdate(3, limits, rs("new", 0, 0), [rs("old", 3)]), [
      { name: "new", from: 0, to: 1 },
    ]);
    // Wait while it is unavailable: nothing to do.
    assert.deepEqual(planRollingUpdate(3, limits, rs("new", 1, 0), [rs("old", 3)]), []);
    // Once available, one old pod may go.
    assert.deepEqual(planRollingUpdate(3, limits, rs("new", 1, 1), [rs("old", 3)]), [
      { name: "old", from: 3, to: 2 },
    ]);
    // Then the new one surges again.
    assert.deepEqual(planRollingUpdate(3, limits, rs("new", 1, 1), [rs("old", 2)]), [
      { name: "new", from: 1, to: 2 },
    ]);
    assert.deepEqual(planRollingUpdate(3, limits, rs("new", 3, 3), [rs("old", 1)]), [
      { name: "old", from: 1, to: 0 },
    ]);
    assert.deepEqual(planRollingUpdate(3, limits, rs("new", 3, 3), [rs("old", 0, 0, 0)]), []);
  });

  it("with maxUnavailable scales old pods down before new ones are available", () => {
    const limits = { maxSurge: 0, maxUnavailable: 1 };
    assert.deepEqual(planRollingUpdate(2, limits, rs("new", 0, 0), [rs("old", 2)]), [
      { name: "old", from: 2, to: 1 },
    ]);
    assert.deepEqual(planRollingUpdate(2, limits, rs("new", 0, 0), [rs("old", 1)]), [
      { name: "new", from: 0, to: 1 },
    ]);
  });

  it("removes unhealthy old pods first, oldest ReplicaSet first", () => {
    const limits = { maxSurge: 1, maxUnavailable: 1 };
    const plan = planRollingUpdate(4, limits, rs("new", 4, 2), [rs("older", 1, 0), rs("old", 1, 1)]);
    assert.deepEqual(plan, [{ name: "older", from: 1, to: 0 }]);
  });

  it("scales the new ReplicaSet down when replicas shrink", () => {
    assert.deepEqual(planRollingUpdate(1, { maxSurge: 1, maxUnavailable: 0 }, rs("new", 3), []), [
      { name: "new", from: 3, to: 1 },
    ]);
  });

  it("recreates: old to zero, wait for their pods, then new up", () => {
    assert.deepEqual(planRecreate(2, rs("new", 0, 0), [rs("old", 2)]), [{ name: "old", from: 2, to: 0 }]);
    assert.deepEqual(planRecreate(2, rs("new", 0, 0), [rs("old", 0, 0, 1)]), []);
    assert.deepEqual(planRecreate(2, rs("new", 0, 0), [rs("old", 0, 0, 0)]), [
      { name: "new", from: 0, to: 2 },
    ]);
  });
});

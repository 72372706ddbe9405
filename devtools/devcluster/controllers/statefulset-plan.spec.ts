import assert from "node:assert/strict";
import { type OrdinalPod, planStatefulSet, type StatefulSetPlanInput } from "./statefulset-plan.ts";

const pod = (ordinal: number, extra: Partial<OrdinalPod> = {}): OrdinalPod => ({
  ordinal,
  name: `db-${ordinal}`,
  revision: "r2",
  ready: true,
  terminating: false,
  failed: false,
  ...extra,
});
const input = (pods: OrdinalPod[], extra: Partial<StatefulSetPlanInput> = {}): StatefulSetPlanInput => ({
  replicas: 3,
  parallel: false,
  rollingUpdate: true,
  partition: 0,
  updateRevision: "r2",
  pods,
  ...extra,
});

describe("statefulset-plan", () => {
  it("creates ordinals one at a time, each after the previous is ready", () => {
    assert.deepEqual(planStatefulSet(input([])), { create: [0], delete: [] });
    assert.deepEqual(planStatefulSet(input([pod(0, { ready: false })])), { create: [], delete: [] });
    assert.deepEqual(planStatefulSet(input([pod(0)])), { create: [1], delete: [] });
    assert.deepEqual(planStatefulSet(input([pod(0), pod(1), pod(2)])), { create: [], delete: [] });
  });

  it("creates everything at once under Parallel", () => {
    assert.deepEqual(planStatefulSet(input([], { parallel: true })), { create: [0, 1, 2], delete: [] });
  });

  it("removes the highest ordinals first, one at a time", () => {
    const pods = [pod(0), pod(1), pod(2)];
    assert.deepEqual(planStatefulSet(input(pods, { replicas: 1 })), { create: [], delete: ["db-2"] });
    const removing = [pod(0), pod(1), pod(2, { terminating: true })];
    assert.deepEqual(planStatefulSet(input(removing, { replicas: 1 })), { create: [], delete: [] });
  });

  it("replaces failed pods", () => {
    assert.deepEqual(planStatefulSet(input([pod(0), pod(1, { failed: true })])), {
      create: [],
      delete: ["db-1"],
    });
  });

  it("rolls out a new revision from the highest ordinal down to the partition", () => {
    const old = [pod(0, { revision: "r1" }), pod(1, { revision: "r1" }), pod(2, { revision: "r1" })];
    assert.deepEqual(planStatefulSet(input(old)), { create: [], delete: ["db-2"] });
    const half = [pod(0, { revision: "r1" }), pod(1, { revision: "r1" }), pod(2)];
    assert.deepEqual(planStatefulSet(input(half)), { create: [], delete: ["db-1"] });
    assert.deepEqual(planStatefulSet(input(half, { partition: 2 })), { create: [], delete: [] });
    assert.deepEqual(planStatefulSet(input(old, { rollingUpdate: false })), { create: [], delete: [] });
  });
});

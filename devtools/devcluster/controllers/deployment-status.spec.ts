import assert from "node:assert/strict";
import type { Deployment, ReplicaSet, ReplicaSetStatus } from "../objects/workload-types.ts";
import { deploymentStatus, madeProgress, msUntilDeadline } from "./deployment-status.ts";

const T0 = Date.UTC(2025, 0, 1);
const deployment = (replicas: number, status?: Deployment["status"]): Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", generation: 2 },
  spec: { replicas, selector: {}, template: { spec: { containers: [] } }, progressDeadlineSeconds: 60 },
  ...(status ? { status } : {}),
});
const rs = (name: string, status: ReplicaSetStatus): ReplicaSet => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name },
  spec: { replicas: status.replicas, selector: {}, template: { spec: { containers: [] } } },
  status,
});
const cond = (status: { conditions?: { type: string; status: string; reason?: string }[] }, type: string) =>
  status.conditions?.find((c) => c.type === type);

describe("deployment-status", () => {
  it("sums the ReplicaSets and reports a finished rollout as available and complete", () => {
    const fresh = rs("web-new", { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
    const status = deploymentStatus({
      deployment: deployment(2),
      newRs: fresh,
      allRss: [fresh],
      maxUnavailable: 0,
      createdNewRs: false,
      now: T0,
    });
    assert.equal(status.observedGeneration, 2);
    assert.deepEqual(
      [
        status.replicas,
        status.updatedReplicas,
        status.readyReplicas,
        status.availableReplicas,
        status.unavailableReplicas,
      ],
      [2, 2, 2, 2, 0],
    );
    assert.equal(cond(status, "Available")?.status, "True");
    assert.equal(cond(status, "Progressing")?.reason, "NewReplicaSetAvailable");
  });

  it("counts old pods during a rollout and marks it progressing", () => {
    const fresh = rs("web-new", { replicas: 1, readyReplicas: 0, availableReplicas: 0 });
    const old = rs("web-old", { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
    const status = deploymentStatus({
      deployment: deployment(2),
      newRs: fresh,
      allRss: [fresh, old],
      maxUnavailable: 0,
      createdNewRs: true,
      now: T0,
    });
    assert.deepEqual([status.replicas, status.updatedReplicas, status.availableReplicas], [3, 1, 2]);
    assert.equal(cond(status, "Progressing")?.reason, "NewReplicaSetCreated");
    assert.equal(cond(status, "Available")?.status, "True");
  });

  it("times out a rollout that made no progress for progressDeadlineSeconds", () => {
    const stuck = rs("web-new", { replicas: 1, readyReplicas: 0, availableReplicas: 0 });
    const first = deploymentStatus({
      deployment: deployment(1),
      newRs: stuck,
      allRss: [stuck],
      maxUnavailable: 0,
      createdNewRs: false,
      now: T0,
    });
    assert.equal(cond(first, "Progressing")?.reason, "ReplicaSetUpdated");
    assert.equal(cond(first, "Available")?.reason, "MinimumReplicasUnavailable");
    assert.equal(msUntilDeadline(deployment(1), first, T0 + 30_000), 31_000);
    const later = deploymentStatus({
      deployment: deployment(1, first),
      newRs: stuck,
      allRss: [stuck],
      maxUnavailable: 0,
      createdNewRs: false,
      now: T0 + 60_000,
    });
    assert.equal(cond(later, "Progressing")?.status, "False");
    assert.equal(cond(later, "Progressing")?.reason, "ProgressDeadlineExceeded");
  });

  it("recognises progress", () => {
    assert.equal(
      madeProgress({ replicas: 3, updatedReplicas: 1 }, { replicas: 3, updatedReplicas: 2 }),
      true,
    );
    assert.equal(
      madeProgress({ replicas: 3, updatedReplicas: 3 }, { replicas: 3, updatedReplicas: 3 }),
      false,
    );
    assert.equal(madeProgress({ readyReplicas: 1 }, { readyReplicas: 2 }), true);
  });
});

import assert from "node:assert/strict";
import { MODEL_REF, modelSpec, poolSpec, pools } from "../testing/fixtures.ts";
import { planPlacement } from "./planner.ts";
import { observePod } from "./pod-state.ts";
import { shardPod } from "./pod-template.ts";

describe("pod state", () => {
  const spec = modelSpec({ parallelism: { tensor: 2 } });
  const plan = planPlacement({ model: MODEL_REF, spec, pools: pools({ default: {} }) });
  const group = plan.groups[0]!;
  const pod = shardPod(MODEL_REF, spec, poolSpec(), group, group.shards[1]!);

  it("reads the shard identity back from the labels", () => {
    assert.deepEqual(observePod(pod), {
      name: group.shards[1]!.podName,
      role: "both",
      replica: 0,
      stage: 0,
      rank: 1,
      revision: group.revision,
      groupSize: 2,
      ready: false,
      failed: false,
      restarted: false,
      terminating: false,
    });
  });

  it("is ready only when Running with the Ready condition and not terminating", () => {
    const status = { phase: "Running", podIP: "127.0.1.2", conditions: [{ type: "Ready", status: "True" }] };
    assert.equal(observePod({ ...pod, status })?.ready, true);
    assert.equal(observePod({ ...pod, status })?.podIP, "127.0.1.2");
    assert.equal(observePod({ ...pod, status: { ...status, phase: "Pending" } })?.ready, false);
    const deleting = {
      ...pod,
      metadata: { ...pod.metadata, deletionTimestamp: "2025-01-01T00:00:00Z" },
      status,
    };
    assert.deepEqual([observePod(deleting)?.ready, observePod(deleting)?.terminating], [false, true]);
    assert.equal(observePod({ ...pod, status: { phase: "Failed" } })?.failed, true);
    assert.equal(
      observePod({ ...pod, status: { containerStatuses: [{ restartCount: 2 }] } })?.restarted,
      true,
    );
  });

  it("ignores pods without the operator's labels", () => {
    assert.equal(observePod({ metadata: { name: "x", labels: { app: "y" } } }), undefined);
  });
});

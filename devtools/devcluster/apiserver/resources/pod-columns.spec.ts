import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { podReady, podRestarts, podStatusText } from "./pod-columns.ts";

const pod = (status: unknown, deleting = false): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", ...(deleting ? { deletionTimestamp: "2025-01-01T00:00:00Z" } : {}) },
  spec: { containers: [{ name: "c" }] },
  status,
});

describe("pod-columns", () => {
  it("shows readiness, the waiting reason over the phase, and Terminating while deleting", () => {
    const crashing = pod({
      phase: "Running",
      containerStatuses: [
        { ready: false, restartCount: 3, state: { waiting: { reason: "CrashLoopBackOff" } } },
      ],
    });
    assert.deepEqual(
      [podReady(crashing), podStatusText(crashing), podRestarts(crashing)],
      ["0/1", "CrashLoopBackOff", 3],
    );
    assert.equal(podStatusText(pod({ phase: "Running" }, true)), "Terminating");
    assert.equal(podStatusText(pod(undefined)), "Pending");
  });
});

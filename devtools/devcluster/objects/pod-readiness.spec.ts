import assert from "node:assert/strict";
import { isPodActive, isPodAvailable, isPodReady, msUntilAvailable } from "./pod-readiness.ts";
import type { Pod, PodStatus } from "./pod-types.ts";

const pod = (status: PodStatus, deleting = false): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", ...(deleting ? { deletionTimestamp: "2025-01-01T00:00:00Z" } : {}) },
  spec: { containers: [] },
  status,
});
const readySince = (time: string) =>
  pod({ phase: "Running", conditions: [{ type: "Ready", status: "True", lastTransitionTime: time }] });

describe("pod-readiness", () => {
  it("a pod is ready when its Ready condition is True", () => {
    assert.equal(isPodReady(readySince("2025-01-01T00:00:00Z")), true);
    assert.equal(isPodReady(pod({ conditions: [{ type: "Ready", status: "False" }] })), false);
    assert.equal(isPodReady(pod({})), false);
  });

  it("terminating and finished pods are not active", () => {
    assert.equal(isPodActive(pod({ phase: "Running" })), true);
    assert.equal(isPodActive(pod({ phase: "Pending" })), true);
    assert.equal(isPodActive(pod({ phase: "Running" }, true)), false);
    assert.equal(isPodActive(pod({ phase: "Succeeded" })), false);
    assert.equal(isPodActive(pod({ phase: "Failed" })), false);
  });

  it("a pod is available once it has been ready for minReadySeconds", () => {
    const p = readySince("2025-01-01T00:00:00Z");
    const start = Date.parse("2025-01-01T00:00:00Z");
    assert.equal(isPodAvailable(p, 0, start), true);
    assert.equal(isPodAvailable(p, 5, start + 4_000), false);
    assert.equal(isPodAvailable(p, 5, start + 5_000), true);
    assert.equal(msUntilAvailable(p, 5, start + 4_000), 1_000);
    assert.equal(msUntilAvailable(pod({}), 5, start), undefined);
  });
});

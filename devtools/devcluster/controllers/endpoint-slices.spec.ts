import assert from "node:assert/strict";
import type { Pod } from "../objects/pod-types.ts";
import type { Service } from "../objects/workload-types.ts";
import { desiredSlices } from "./endpoint-slices.ts";

const service = (extra: Partial<Service["spec"]> = {}): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "default" },
  spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }], ...extra },
});
const pod = (name: string, ip: string | undefined, ready: boolean, extra: Partial<Pod> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", uid: `uid-${name}` },
  spec: { nodeName: "n", containers: [{ name: "c", ports: [{ name: "http", containerPort: 8080 }] }] },
  status: {
    phase: "Running",
    ...(ip ? { podIP: ip } : {}),
    conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
  },
  ...extra,
});

describe("endpoint-slices", () => {
  it("lists selected pods with IPs, resolves named target ports and marks readiness", () => {
    const [slice] = desiredSlices(service(), [
      pod("b", "127.1.0.3", false),
      pod("a", "127.1.0.2", true),
      pod("pending", undefined, false),
    ]);
    assert.deepEqual(slice?.ports, [{ name: "http", port: 8080, protocol: "TCP" }]);
    assert.deepEqual(
      slice?.endpoints.map((e) => [e.addresses[0], e.conditions.ready, e.targetRef?.name]),
      [
        ["127.1.0.2", true, "a"],
        ["127.1.0.3", false, "b"],
      ],
    );
  });

  it("keeps terminating pods as not ready, and publishes not-ready addresses when asked", () => {
    const leaving = pod("a", "127.1.0.2", true, {
      metadata: { name: "a", deletionTimestamp: "2025-01-01T00:00:00Z" },
    });
    const [slice] = desiredSlices(service(), [leaving]);
    assert.deepEqual(slice?.endpoints[0]?.conditions, { ready: false, serving: true, terminating: true });
    const [published] = desiredSlices(service({ publishNotReadyAddresses: true }), [
      pod("b", "127.1.0.3", false),
    ]);
    assert.equal(published?.endpoints[0]?.conditions.ready, true);
  });

  it("has one empty slice when no pod is selected, with numeric ports", () => {
    assert.deepEqual(desiredSlices(service({ ports: [{ port: 80 }] }), []), [
      { endpoints: [], ports: [{ name: "", port: 80, protocol: "TCP" }] },
    ]);
  });
});

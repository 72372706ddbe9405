import assert from "node:assert/strict";
import type { ContainerStatus, Pod, PodSpec } from "../objects/pod-types.ts";
import { type PodRuntime, podPhase, podStatus, qosClass } from "./pod-status.ts";

const T0 = Date.UTC(2025, 0, 1);
const running = (name: string, ready: boolean, restartCount = 0): ContainerStatus => ({
  name,
  image: "i",
  imageID: "",
  ready,
  started: true,
  restartCount,
  state: { running: { startedAt: "2025-01-01T00:00:00Z" } },
  lastState: {},
});
const terminated = (name: string, exitCode: number): ContainerStatus => ({
  name,
  image: "i",
  imageID: "",
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode, reason: exitCode === 0 ? "Completed" : "Error" } },
  lastState: {},
});
const waiting = (name: string, crashed = false): ContainerStatus => ({
  name,
  image: "i",
  imageID: "",
  ready: false,
  restartCount: crashed ? 1 : 0,
  state: { waiting: { reason: crashed ? "CrashLoopBackOff" : "ContainerCreating" } },
  lastState: crashed ? { terminated: { exitCode: 1 } } : {},
});
const runtime = (statuses: ContainerStatus[], initStatuses: ContainerStatus[] = []): PodRuntime => ({
  hostIP: "127.0.0.1",
  podIP: "127.1.0.2",
  startTime: T0,
  statuses,
  initStatuses,
});
const spec = (restartPolicy: NonNullable<PodSpec["restartPolicy"]>): PodSpec => ({
  containers: [],
  restartPolicy,
});
const pod = (extra: Partial<Pod> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p" },
  spec: { containers: [{ name: "a" }, { name: "b" }] },
  ...extra,
});

describe("pod-status", () => {
  it("derives the phase as the kubelet does", () => {
    assert.equal(podPhase(spec("Always"), runtime([running("a", true), waiting("b")])), "Pending");
    assert.equal(podPhase(spec("Always"), runtime([running("a", true), waiting("b", true)])), "Running");
    assert.equal(podPhase(spec("Always"), runtime([terminated("a", 0)])), "Running");
    assert.equal(podPhase(spec("Never"), runtime([terminated("a", 0), terminated("b", 0)])), "Succeeded");
    assert.equal(podPhase(spec("Never"), runtime([terminated("a", 0), terminated("b", 2)])), "Failed");
    assert.equal(podPhase(spec("OnFailure"), runtime([terminated("a", 0)])), "Succeeded");
    assert.equal(podPhase(spec("Always"), runtime([], [running("init", false)])), "Pending");
    assert.equal(podPhase(spec("Never"), runtime([], [terminated("init", 1)])), "Failed");
  });

  it("is Ready only when every container is ready, and names the ones that are not", () => {
    const status = podStatus(pod(), runtime([running("a", true), running("b", false)]), T0);
    const byType = Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c]));
    assert.equal(byType["PodScheduled"]?.status, "True");
    assert.equal(byType["Initialized"]?.status, "True");
    assert.equal(byType["ContainersReady"]?.status, "False");
    assert.equal(byType["Ready"]?.status, "False");
    assert.equal(byType["Ready"]?.message, "containers with unready status: [b]");
    assert.equal(status.phase, "Running");
    assert.equal(status.podIP, "127.1.0.2");
    assert.deepEqual(status.podIPs, [{ ip: "127.1.0.2" }]);
    assert.equal(status.startTime, "2025-01-01T00:00:00Z");
    assert.equal(status.qosClass, "BestEffort");
  });

  it("moves lastTransitionTime only when a condition's status changes, and keeps others' conditions", () => {
    const first = podStatus(pod(), runtime([running("a", false), running("b", false)]), T0);
    const withGate = pod({
      spec: { containers: [{ name: "a" }], readinessGates: [{ conditionType: "example.com/ready" }] },
      status: {
        ...first,
        conditions: [...(first.conditions ?? []), { type: "example.com/ready", status: "False" }],
      },
    });
    const later = podStatus(withGate, runtime([running("a", true)]), T0 + 60_000);
    const byType = Object.fromEntries((later.conditions ?? []).map((c) => [c.type, c]));
    assert.equal(byType["Initialized"]?.lastTransitionTime, "2025-01-01T00:00:00Z");
    assert.equal(byType["ContainersReady"]?.lastTransitionTime, "2025-01-01T00:01:00Z");
    assert.equal(byType["Ready"]?.status, "False");
    assert.equal(byType["Ready"]?.reason, "ReadinessGatesNotReady");
    assert.equal(byType["example.com/ready"]?.status, "False");
  });

  it("reports incomplete init containers", () => {
    const status = podStatus(pod(), runtime([waiting("a"), waiting("b")], [running("setup", false)]), T0);
    const initialized = status.conditions?.find((c) => c.type === "Initialized");
    assert.equal(initialized?.status, "False");
    assert.equal(initialized?.message, "containers with incomplete status: [setup]");
    assert.equal(status.initContainerStatuses?.length, 1);
  });

  it("classifies QoS", () => {
    const c = (requests: Record<string, string>, limits: Record<string, string>) => ({
      name: "c",
      resources: { requests, limits },
    });
    assert.equal(qosClass({ containers: [c({}, {})] }), "BestEffort");
    assert.equal(qosClass({ containers: [c({}, { cpu: "1", memory: "1Gi" })] }), "Guaranteed");
    assert.equal(qosClass({ containers: [c({ cpu: "500m" }, { cpu: "1", memory: "1Gi" })] }), "Burstable");
  });
});

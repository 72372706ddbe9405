import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { namespaceKind, podKind, secretKind, serviceKind } from "./core-kinds.ts";

const object = (kind: string, rest: Record<string, unknown>): KubeObject => ({
  apiVersion: "v1",
  kind,
  metadata: { name: "x", namespace: "ns" },
  ...rest,
});

describe("core-kinds", () => {
  it("defaults pods, services, secrets and namespaces as the API server does", () => {
    const pod = object("Pod", {
      spec: { containers: [{ name: "c", image: "i", ports: [{ containerPort: 80 }] }] },
    });
    podKind.defaults?.(pod);
    assert.deepEqual(
      [(pod["spec"] as { restartPolicy: string }).restartPolicy, (pod["status"] as { phase: string }).phase],
      ["Always", "Pending"],
    );
    const svc = object("Service", { spec: { ports: [{ port: 80 }] } });
    serviceKind.defaults?.(svc);
    assert.match((svc["spec"] as { clusterIP: string }).clusterIP, /^10\.96\.\d+\.\d+$/);
    assert.deepEqual((svc["spec"] as { ports: unknown[] }).ports, [
      { port: 80, protocol: "TCP", targetPort: 80 },
    ]);
    const secret = object("Secret", { stringData: { a: "b" } });
    secretKind.defaults?.(secret);
    assert.deepEqual(
      [secret["type"], secret["data"], secret["stringData"]],
      ["Opaque", { a: "Yg==" }, undefined],
    );
    const ns = object("Namespace", {});
    namespaceKind.defaults?.(ns);
    assert.deepEqual(ns["spec"], { finalizers: ["kubernetes"] });
  });

  it("validates pod containers and service ports", () => {
    assert.deepEqual(
      podKind
        .validate?.(object("Pod", { spec: { containers: [{ name: "c" }] } }), undefined)
        .map((e) => e.field),
      ["spec.containers[0].image"],
    );
    assert.deepEqual(
      serviceKind
        .validate?.(object("Service", { spec: { ports: [{ port: 70000 }] } }), undefined)
        .map((e) => e.field),
      ["spec.ports[0].port"],
    );
  });

  it("prints pod columns", () => {
    const pod = object("Pod", {
      spec: { containers: [{ name: "a" }, { name: "b" }] },
      status: { phase: "Running", containerStatuses: [{ ready: true, restartCount: 2 }] },
    });
    assert.deepEqual(
      podKind.printerColumns.slice(0, 3).map((c) => c.cell(pod, 0)),
      ["1/2", "Running", "2"],
    );
  });
});

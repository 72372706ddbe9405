import assert from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { LeaseSchema } from "../../proto/gen/k8s/coordination_pb.js";
import { PodSchema, VolumeSchema } from "../../proto/gen/k8s/core_pb.js";
import { objectJson } from "./proto-json.ts";

// Messages as Go writes them: every non-pointer field present, with its zero value.
describe("proto-json", () => {
  it("maps a Pod: inline volume sources and probe handlers, IntOrString, quantities, pointer zeros", () => {
    const pod = create(PodSchema, {
      metadata: { name: "p", namespace: "", generation: 0n, labels: { app: "p" } },
      spec: {
        hostNetwork: false,
        terminationGracePeriodSeconds: 0n,
        securityContext: { runAsUser: 0n, runAsNonRoot: false },
        volumes: [
          create(VolumeSchema, {
            name: "cfg",
            volumeSource: { configMap: { localObjectReference: { name: "c" }, defaultMode: 420 } },
          }),
        ],
        containers: [
          {
            name: "c",
            image: "i",
            stdin: false,
            tty: false,
            ports: [{ containerPort: 80, hostPort: 0, protocol: "TCP", name: "" }],
            resources: { limits: { cpu: { string: "500m" }, memory: { string: "1Gi" } } },
            readinessProbe: {
              handler: { httpGet: { path: "/", port: { type: 1n, strVal: "http" } } },
              initialDelaySeconds: 0,
              periodSeconds: 5,
            },
            livenessProbe: { handler: { tcpSocket: { port: { type: 0n, intVal: 8080 } } } },
          },
        ],
      },
    });
    const bytes = toBinary(PodSchema, pod);
    assert.deepEqual(objectJson(PodSchema, fromBinary(PodSchema, bytes) as never, "v1", "Pod"), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", labels: { app: "p" } },
      spec: {
        volumes: [{ name: "cfg", configMap: { name: "c", defaultMode: 420 } }],
        containers: [
          {
            name: "c",
            image: "i",
            ports: [{ containerPort: 80, protocol: "TCP" }],
            resources: { limits: { cpu: "500m", memory: "1Gi" } },
            livenessProbe: { tcpSocket: { port: 8080 } },
            readinessProbe: { httpGet: { path: "/", port: "http" }, periodSeconds: 5 },
          },
        ],
        terminationGracePeriodSeconds: 0,
        securityContext: { runAsUser: 0, runAsNonRoot: false },
      },
    });
  });

  it("writes MicroTime with microseconds and drops Go's zero time", () => {
    const lease = create(LeaseSchema, {
      metadata: { name: "l", creationTimestamp: { seconds: 0n, nanos: 0 } },
      spec: {
        holderIdentity: "me",
        leaseDurationSeconds: 15,
        renewTime: { seconds: 1735689600n, nanos: 123456789 },
        leaseTransitions: 0,
      },
    });
    assert.deepEqual(objectJson(LeaseSchema, lease as never, "coordination.k8s.io/v1", "Lease"), {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "l" },
      spec: {
        holderIdentity: "me",
        leaseDurationSeconds: 15,
        renewTime: "2025-01-01T00:00:00.123456Z",
        leaseTransitions: 0,
      },
    });
  });
});

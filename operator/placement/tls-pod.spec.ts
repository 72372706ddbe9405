import assert from "node:assert/strict";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { routerDeployment } from "../router/router-objects.ts";
import { MODEL_REF, modelSpec, poolSpec, pools } from "../testing/fixtures.ts";
import { restrictedViolations } from "../testing/pod-security.ts";
import { planPlacement } from "./planner.ts";
import { shardPod } from "./pod-template.ts";

interface Container {
  env: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
  startupProbe: Record<string, unknown>;
  readinessProbe: Record<string, unknown>;
}
interface PodSpec {
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string } }[];
}

const pool = poolSpec({});
const tls = { secretName: "tiny-mtls", serverName: "tiny-workers.ns.svc" };

function workerPod(spec: ReturnType<typeof modelSpec>): PodSpec {
  const plan = planPlacement({ model: MODEL_REF, spec, pools: pools({ default: {} }) });
  const group = plan.groups[0]!;
  return shardPod(MODEL_REF, spec, pool, group, group.shards[0]!)["spec"] as PodSpec;
}

function routerPod(spec: ReturnType<typeof modelSpec>): PodSpec {
  const d = routerDeployment(MODEL_REF, spec, pool) as KubeObject & { spec: { template: { spec: PodSpec } } };
  return d.spec.template.spec;
}

const env = (c: Container) => Object.fromEntries(c.env.map((e) => [e.name, e.value]));

describe("spec.tls on the pods the operator creates", () => {
  it("leaves pods plaintext without it: no Secret, no TLS variables, gRPC probes", () => {
    for (const pod of [workerPod(modelSpec({})), routerPod(modelSpec({}))]) {
      const c = pod.containers[0]!;
      assert.ok(!pod.volumes.some((v) => v.secret?.secretName === tls.secretName));
      assert.ok(!Object.keys(env(c)).some((k) => k.includes("TLS")));
      assert.deepEqual(Object.keys(c.readinessProbe).includes("grpc"), true);
    }
  });

  it("mounts the Secret read-only into workers, points tessera serve at it and probes by TCP", () => {
    const pod = workerPod(modelSpec({ tls }));
    const c = pod.containers[0]!;
    assert.deepEqual(
      pod.volumes.find((v) => v.name === "tls"),
      { name: "tls", secret: { secretName: "tiny-mtls" } },
    );
    assert.deepEqual(
      c.volumeMounts.find((m) => m.name === "tls"),
      { name: "tls", mountPath: "/etc/tessera/tls", readOnly: true },
    );
    assert.equal(env(c)["TESSERA_TLS_DIR"], "/etc/tessera/tls");
    assert.equal(env(c)["TESSERA_TLS_SERVER_NAME"], "tiny-workers.ns.svc");
    assert.deepEqual(c.readinessProbe["tcpSocket"], { port: 50051 });
    assert.equal(c.startupProbe["grpc"], undefined);
    assert.deepEqual(restrictedViolations({ apiVersion: "v1", kind: "Pod", metadata: {}, spec: pod }), []);
  });

  it("gives the router the workers' Secret and its front door's, and probes the front door by TCP", () => {
    const front = routerPod(
      modelSpec({ tls: { ...tls, frontDoor: { secretName: "tiny-front", clientAuth: true } } }),
    );
    const c = front.containers[0]!;
    assert.deepEqual(
      front.volumes.filter((v) => v.secret).map((v) => [v.name, v.secret?.secretName]),
      [
        ["tls", "tiny-mtls"],
        ["front-tls", "tiny-front"],
      ],
    );
    assert.deepEqual(env(c), {
      ...env(c),
      TESSERA_TLS_DIR: "/etc/tessera/tls",
      TESSERA_TLS_SERVER_NAME: "tiny-workers.ns.svc",
      TESSERA_FRONT_TLS_DIR: "/etc/tessera/front-tls",
      TESSERA_FRONT_TLS_CLIENT_AUTH: "true",
    });
    assert.ok(c.readinessProbe["tcpSocket"]);
    // Internal TLS alone leaves the front door, and its gRPC probe, in plaintext.
    const internal = routerPod(modelSpec({ tls })).containers[0]!;
    assert.ok(internal.readinessProbe["grpc"]);
    assert.equal(env(internal)["TESSERA_FRONT_TLS_DIR"], undefined);
  });
});

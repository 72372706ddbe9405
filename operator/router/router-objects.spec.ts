import assert from "node:assert/strict";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { MODEL_REF, modelSpec, poolSpec } from "../testing/fixtures.ts";
import { restrictedViolations } from "../testing/pod-security.ts";
import {
  routerAvailable,
  routerDeployment,
  routerEndpoint,
  routerObjects,
  routerPodDisruptionBudget,
  routerRole,
  routerRoleBinding,
  routerService,
} from "./router-objects.ts";

interface Container {
  command: string[];
  args: string[];
  image: string;
  readinessProbe: unknown;
  volumeMounts: { name: string; mountPath: string }[];
}
interface DeploymentSpec {
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string> };
    spec: { serviceAccountName: string; containers: Container[]; volumes: Record<string, unknown>[] };
  };
}

const deploymentSpec = (d: KubeObject) => d["spec"] as DeploymentSpec;
const container = (d: KubeObject) => deploymentSpec(d).template.spec.containers[0]!;
const configArg = (d: KubeObject) => {
  const args = container(d).args;
  return JSON.parse(args[args.indexOf("--config-json") + 1]!) as Record<string, unknown>;
};
const pool = poolSpec({ image: "example/tessera:1", command: ["node", "services/cli/main.ts"] });

describe("router objects", () => {
  it("runs `tessera router` with the pool's image and command, this model's config, on the pod IP", () => {
    const d = routerDeployment(MODEL_REF, modelSpec(), pool);
    assert.equal(d.metadata.name, "tiny-router");
    assert.equal(container(d).image, "example/tessera:1");
    assert.deepEqual(container(d).command, ["node", "services/cli/main.ts"]);
    const args = container(d).args;
    assert.deepEqual(
      [args[0], args[1], ...args.slice(3)],
      ["router", "--config-json", "--host", "$(POD_IP)"],
    );
    assert.deepEqual(configArg(d)["discovery"], {
      type: "kubernetes",
      namespace: "ml",
      inferenceModel: "tiny",
    });
    assert.deepEqual(container(d).readinessProbe, {
      grpc: { port: 50050, service: "" },
      periodSeconds: 2,
      failureThreshold: 2,
    });
    assert.equal(deploymentSpec(d).replicas, 1);
    assert.equal(deploymentSpec(d).template.spec.serviceAccountName, "tiny-router");
  });

  it("runs spec.routing.replicas router pods, spread over nodes", () => {
    const d = routerDeployment(MODEL_REF, modelSpec({ routing: { replicas: 3 } }), pool);
    assert.equal(deploymentSpec(d).replicas, 3);
    const spread = (deploymentSpec(d).template.spec as { topologySpreadConstraints?: unknown[] })
      .topologySpreadConstraints;
    assert.deepEqual(spread, [
      {
        maxSkew: 1,
        topologyKey: "kubernetes.io/hostname",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: deploymentSpec(d).template.metadata.labels },
      },
    ]);
  });

  it("hands the router the KV store's password from its Secret, and no secret without one", () => {
    const env = (spec: ReturnType<typeof modelSpec>) =>
      (container(routerDeployment(MODEL_REF, spec, pool)) as unknown as { env: { name: string }[] }).env;
    const secret = { name: "kv", key: "password" };
    const withSecret = modelSpec({
      kvTransfer: { redis: { address: "redis:6379", passwordSecret: secret } },
    });
    assert.deepEqual(
      env(withSecret).find((e) => e.name === "TESSERA_CACHE_REDIS_PASSWORD"),
      { name: "TESSERA_CACHE_REDIS_PASSWORD", valueFrom: { secretKeyRef: secret } },
    );
    assert.deepEqual(
      env(modelSpec()).map((e) => e.name),
      ["POD_IP", "TMPDIR"],
    );
  });

  it("mounts routing.apiKeysSecret read-only where the router reads its keys, and rolls when it is set", () => {
    const spec = modelSpec({ routing: { apiKeysSecret: { name: "keys", key: "team-keys" } } });
    const template = deploymentSpec(routerDeployment(MODEL_REF, spec, pool)).template;
    const volumes = (template.spec as unknown as { volumes: { name: string }[] }).volumes;
    assert.deepEqual(volumes.at(-1), {
      name: "api-keys",
      secret: { secretName: "keys", items: [{ key: "team-keys", path: "api-keys.yaml" }] },
    });
    assert.deepEqual(template.spec.containers[0]?.volumeMounts.at(-1), {
      name: "api-keys",
      mountPath: "/etc/tessera/api-keys",
      readOnly: true,
    });
    assert.deepEqual(restrictedViolations({ metadata: {}, spec: template.spec }), []);
    const plain = deploymentSpec(routerDeployment(MODEL_REF, modelSpec(), pool)).template;
    assert.notEqual(JSON.stringify(plain), JSON.stringify(template));
  });

  it("lets at most one router pod be disrupted at a time", () => {
    const pdb = routerPodDisruptionBudget(MODEL_REF);
    assert.equal(pdb.apiVersion, "policy/v1");
    assert.deepEqual(pdb["spec"], {
      maxUnavailable: 1,
      selector: {
        matchLabels: deploymentSpec(routerDeployment(MODEL_REF, modelSpec(), pool)).template.metadata.labels,
      },
    });
    assert.ok(routerObjects(MODEL_REF, modelSpec(), pool).some((o) => o.kind === "PodDisruptionBudget"));
  });

  it("meets the restricted Pod Security profile", () => {
    const spec = modelSpec({ model: { path: "tiny", pvc: { claimName: "weights" } } });
    const template = deploymentSpec(routerDeployment(MODEL_REF, spec, pool)).template;
    assert.deepEqual(restrictedViolations({ metadata: {}, spec: template.spec }), []);
    assert.deepEqual(
      template.spec.containers[0]?.volumeMounts.map((m) => m.mountPath),
      ["/scratch", "/models"],
    );
  });

  it("changes its pod template when the routing changes, not when the engine or replicas do", () => {
    const template = (overrides: Parameters<typeof modelSpec>[0]) =>
      JSON.stringify(deploymentSpec(routerDeployment(MODEL_REF, modelSpec(overrides), pool)).template);
    const base = template({});
    assert.notEqual(template({ routing: { strategy: "least-load" } }), base);
    assert.notEqual(template({ routing: { epsilon: 1 } }), base);
    assert.equal(template({ replicas: 5, engine: { maxNumSeqs: 8 } }), base);
    assert.equal(template({ routing: { replicas: 3 } }), base, "more router pods, no rollout");
    const random = routerDeployment(MODEL_REF, modelSpec({ routing: { strategy: "random" } }), pool);
    assert.deepEqual((configArg(random)["routing"] as { picker: unknown }).picker, { type: "random" });
  });

  it("is owned by the model (garbage-collected with it) and labelled apart from the worker pods", () => {
    for (const object of routerObjects(MODEL_REF, modelSpec(), pool)) {
      assert.deepEqual(
        object.metadata.ownerReferences,
        [
          {
            apiVersion: "serving.tessera.dev/v1alpha1",
            kind: "InferenceModel",
            name: "tiny",
            uid: "uid-1",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        object.kind,
      );
      assert.equal(object.metadata.labels?.["serving.tessera.dev/model"], "tiny", object.kind);
    }
    const podLabels = deploymentSpec(routerDeployment(MODEL_REF, modelSpec(), pool)).template.metadata.labels;
    assert.equal(podLabels["serving.tessera.dev/model"], undefined, "worker pods are found by this label");
    assert.deepEqual((routerService(MODEL_REF)["spec"] as { selector: unknown }).selector, podLabels);
  });

  it("lets the router read inferencemodels in its namespace, and nothing else", () => {
    assert.deepEqual(routerRole(MODEL_REF)["rules"], [
      { apiGroups: ["serving.tessera.dev"], resources: ["inferencemodels"], verbs: ["get", "list", "watch"] },
    ]);
    assert.deepEqual(routerRoleBinding(MODEL_REF)["subjects"], [
      { kind: "ServiceAccount", name: "tiny-router", namespace: "ml" },
    ]);
  });

  it("serves grpc and http on its Service, whose address is the model's routerEndpoint", () => {
    const ports = (routerService(MODEL_REF)["spec"] as { ports: { name: string; port: number }[] }).ports;
    assert.deepEqual(
      ports.map((p) => `${p.name}:${p.port}`),
      ["grpc:50050", "http:8080", "metrics:9090"],
    );
    assert.equal(routerEndpoint(MODEL_REF), "tiny-router.ml.svc:50050");
  });

  it("is available once its Deployment reports an available replica", () => {
    const d = (status: unknown): KubeObject => ({ metadata: {}, status });
    assert.equal(routerAvailable(undefined), false);
    assert.equal(routerAvailable(d({})), false);
    assert.equal(routerAvailable(d({ availableReplicas: 0, replicas: 1 })), false);
    assert.equal(routerAvailable(d({ availableReplicas: 1 })), true);
  });
});

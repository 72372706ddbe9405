// The chart as helm renders it (no cluster): lint --strict with helm 4.1 and 3.17, the schema's
// refusals, least-privilege RBAC equal to the operator's permission list, restricted Pod Security on
// every pod, the router's rendered config accepted by the router's own parser, Redis and its
// Secret, monitoring objects, dashboards and NetworkPolicies.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { OPERATOR_PERMISSIONS } from "../../operator/deploy/permissions.ts";
import { restrictedViolations } from "../../operator/testing/pod-security.ts";
import { workerPoolSpecSchema } from "../../services/api/worker-pool.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { parseRouterConfig } from "../../services/router/config/router-config.ts";
import { CHART, containersOf, DEV_VALUES, find, must, podOf, render, runHelm } from "./chart-tool.ts";

const ALL_ON = [
  "--set",
  "router.enabled=true,redis.enabled=true,networkPolicy.enabled=true,operator.replicas=2",
  "--set",
  "monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true",
  "--set-json",
  'router.models=[{"id":"tiny-llama","tokenizer":"/models/tiny-llama"}]',
  "--set-json",
  'router.discovery={"type":"static","endpoints":[{"name":"w0","address":"10.0.0.7:50051"}]}',
];

const spec = <T>(o: KubeObject) => o["spec"] as T;

describe("charts/tessera rendered by helm (no cluster)", function () {
  this.timeout(30_000);
  let defaults: KubeObject[];
  let allOn: KubeObject[];

  before(async () => {
    [defaults, allOn] = await Promise.all([render(), render(...ALL_ON)]);
  });

  it("passes helm lint --strict (helm 4.1 and 3.17) with default, dev-cluster and all-on values", async () => {
    const runs = await Promise.all([
      runHelm(["lint", "--strict", CHART]),
      runHelm(["lint", "--strict", CHART, "-f", DEV_VALUES, ...ALL_ON]),
      runHelm(["lint", "--strict", CHART, "--set", "operator.clusterWide=true"], "v31"),
      runHelm(["lint", "--strict", CHART, "-f", DEV_VALUES, ...ALL_ON], "v31"),
    ]);
    for (const run of runs) assert.equal(run.code, 0, run.stdout + run.stderr);
  });

  it("refuses values the schema rules out, naming the field", async () => {
    const refused = async (flags: string[], field: RegExp) => {
      const run = await runHelm(["template", "t", CHART, ...flags]);
      assert.notEqual(run.code, 0, `accepted ${flags.join(" ")}`);
      assert.match(run.stderr, field);
    };
    await refused(["--set", "operator.replicas=-1"], /\/operator\/replicas/);
    await refused(["--set", "operater.replicas=2"], /additional properties 'operater' not allowed/);
    await refused(["--set", "router.enabled=true"], /\/router\/models.*minItems/);
    await refused(["--set", "monitoring.alerts.ttft.seconds=2"], /\/monitoring\/alerts\/ttft\/seconds/);
    await refused(["--set", "redis.maxMemory=lots"], /\/redis\/maxMemory/);
    await refused(
      ["--set-json", 'router.discovery={"type":"static","endpoints":[{"address":"nohost"}]}'],
      /\/router\/discovery/,
    );
  });

  it("renders the operator alone by default: namespaced Role with exactly the operator's permissions", () => {
    assert.deepEqual(defaults.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      "ConfigMap/tessera-dashboard-disaggregation",
      "ConfigMap/tessera-dashboard-engine",
      "ConfigMap/tessera-dashboard-operator",
      "ConfigMap/tessera-dashboard-overview",
      "ConfigMap/tessera-dashboard-router",
      "Deployment/tessera-operator",
      "Lease/tessera-operator",
      "Role/tessera-operator",
      "RoleBinding/tessera-operator",
      "Service/tessera-operator-metrics",
      "ServiceAccount/tessera-operator",
      "WorkerPool/default",
    ]);
    const role = must(defaults, "Role");
    assert.equal(role.metadata.namespace, "tessera-system");
    assert.deepEqual(role["rules"], OPERATOR_PERMISSIONS);
    assert.deepEqual(must(defaults, "RoleBinding")["subjects"], [
      { kind: "ServiceAccount", name: "tessera-operator", namespace: "tessera-system" },
    ]);
    const [operator] = containersOf(must(defaults, "Deployment", "tessera-operator"));
    assert.deepEqual(operator?.command, ["tessera"]);
    assert.deepEqual(operator?.args, [
      "operator",
      "--namespace",
      "tessera-system",
      "--lease-namespace",
      "tessera-system",
      "--workers",
      "4",
      "--metrics-port",
      "8080",
      "--health-port",
      "8081",
      "--bind-address",
      "$(POD_IP)",
    ]);
  });

  it("makes the RBAC cluster-wide on request, and the operator and worker monitor watch every namespace", async () => {
    const objects = await render(
      "--set",
      "operator.clusterWide=true",
      "--set",
      "monitoring.serviceMonitor.enabled=true",
    );
    assert.equal(find(objects, "Role"), undefined);
    assert.deepEqual(must(objects, "ClusterRole")["rules"], OPERATOR_PERMISSIONS);
    assert.equal((must(objects, "ClusterRoleBinding")["roleRef"] as { kind: string }).kind, "ClusterRole");
    assert.ok(containersOf(must(objects, "Deployment"))[0]?.args?.includes("--all-namespaces"));
    assert.deepEqual(spec<{ namespaceSelector: unknown }>(must(objects, "PodMonitor")).namespaceSelector, {
      any: true,
    });
  });

  it("gives every pod the restricted Pod Security settings and every object the release's labels", () => {
    const workloads = allOn.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet");
    assert.deepEqual(workloads.map((w) => w.metadata.name).sort(), [
      "tessera-operator",
      "tessera-redis",
      "tessera-router",
    ]);
    for (const workload of workloads)
      assert.deepEqual(restrictedViolations(podOf(workload)), [], workload.metadata.name);
    for (const o of allOn) {
      assert.equal(
        o.metadata.labels?.["app.kubernetes.io/instance"],
        "tessera",
        `${o.kind}/${o.metadata.name}`,
      );
      assert.equal(o.metadata.labels?.["app.kubernetes.io/managed-by"], "Helm");
    }
    assert.equal(spec<{ replicas: number }>(must(allOn, "Deployment", "tessera-operator")).replicas, 2);
  });

  it("renders a router config the router's own parser accepts, with its endpoints beside it", () => {
    const config = must(allOn, "ConfigMap", "tessera-router")["data"] as Record<string, string>;
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-chart-"));
    try {
      writeFileSync(path.join(dir, "endpoints.yaml"), config["endpoints.yaml"] ?? "");
      const parsed = parseRouterConfig(parseYaml(config["router.yaml"] ?? ""), dir);
      assert.equal(parsed.error, undefined, parsed.error?.message);
      assert.deepEqual(parsed.value?.discovery, {
        type: "static",
        file: path.join(dir, "endpoints.yaml"),
        pollMs: 1000,
      });
      assert.deepEqual(parseYaml(config["endpoints.yaml"] ?? ""), {
        endpoints: [{ name: "w0", address: "10.0.0.7:50051" }],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const router = must(allOn, "Deployment", "tessera-router");
    assert.deepEqual(containersOf(router)[0]?.args, [
      "router",
      "--config",
      "/etc/tessera/router/router.yaml",
      "--host",
      "$(POD_IP)",
    ]);
    assert.match(String(podOf(router).metadata.annotations?.["checksum/config"]), /^[0-9a-f]{64}$/);
    const ports = spec<{ ports: { name: string; port: number }[] }>(
      must(allOn, "Service", "tessera-router"),
    ).ports;
    assert.deepEqual(
      ports.map((p) => [p.name, p.port]),
      [
        ["grpc", 50050],
        ["http", 8080],
        ["metrics", 9090],
      ],
    );
  });

  it("gives a router on kubernetes discovery a read-only Role on InferenceModels; none to a static one", async () => {
    const objects = await render(
      "--set",
      "router.enabled=true,operator.leaderElection=false,workerPools.default=null",
      "--set-json",
      'router.models=[{"id":"m","tokenizer":"/m"}]',
      "--set-json",
      'router.discovery={"type":"kubernetes","inferenceModel":"m"}',
    );
    const config = parseYaml(
      (must(objects, "ConfigMap", "tessera-router")["data"] as Record<string, string>)["router.yaml"] ?? "",
    );
    assert.deepEqual(config.discovery, {
      type: "kubernetes",
      namespace: "tessera-system",
      inferenceModel: "m",
    });
    assert.deepEqual(must(objects, "Role", "tessera-router")["rules"], [
      { apiGroups: ["serving.tessera.dev"], resources: ["inferencemodels"], verbs: ["get", "list", "watch"] },
    ]);
    assert.equal(
      (podOf(must(objects, "Deployment", "tessera-router"))["spec"] as { serviceAccountName: string })
        .serviceAccountName,
      "tessera-router",
    );
    assert.equal(find(allOn, "Role", "tessera-router"), undefined);
    assert.equal(
      (
        podOf(must(allOn, "Deployment", "tessera-router"))["spec"] as {
          automountServiceAccountToken: boolean;
        }
      ).automountServiceAccountToken,
      false,
    );
    assert.ok(
      containersOf(must(objects, "Deployment", "tessera-operator"))[0]?.args?.includes("--no-leader-elect"),
    );
    assert.equal(find(objects, "Lease"), undefined);
    assert.equal(find(objects, "WorkerPool"), undefined);
  });

  it("sets the OTLP endpoint on the router only when tracing is asked for", async () => {
    const env = (objects: KubeObject[]) =>
      containersOf(must(objects, "Deployment", "tessera-router"))[0]?.env?.map((e) => e.name) ?? [];
    assert.ok(!env(allOn).includes("OTEL_EXPORTER_OTLP_ENDPOINT"));
    const traced = await render(...ALL_ON, "--set", "tracing.otlpEndpoint=http://collector:4318");
    assert.ok(env(traced).includes("OTEL_EXPORTER_OTLP_ENDPOINT"));
  });

  it("makes WorkerPools the operator accepts, with the chart's image and command", async () => {
    const dev = await render("-f", DEV_VALUES);
    const pool = must(dev, "WorkerPool", "default");
    const parsed = workerPoolSpecSchema.safeParse(pool["spec"]);
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
    assert.deepEqual(parsed.data?.command, ["node", "services/cli/main.ts"]);
    assert.equal(parsed.data?.image, "ghcr.io/tessera-dev/tessera:0.1.0");
    assert.deepEqual(containersOf(must(dev, "Deployment"))[0]?.command, ["node", "services/cli/main.ts"]);
  });

  it("runs Redis with a generated password Secret, or the Secret the user names", async () => {
    const secret = must(allOn, "Secret", "tessera-redis");
    assert.match(
      Buffer.from((secret["data"] as { password: string }).password, "base64").toString(),
      /^[A-Za-z0-9]{32}$/,
    );
    const [redis] = containersOf(must(allOn, "StatefulSet", "tessera-redis"));
    assert.deepEqual(redis?.command, ["redis-server"]);
    assert.ok(redis?.args?.join(" ").includes("--requirepass $(REDIS_PASSWORD)"));
    assert.deepEqual(redis?.env?.find((e) => e.name === "REDIS_PASSWORD")?.valueFrom, {
      secretKeyRef: { name: "tessera-redis", key: "password" },
    });
    const own = await render(
      "--set",
      "redis.enabled=true,redis.auth.existingSecret=mine,redis.auth.existingSecretKey=pw",
    );
    assert.equal(find(own, "Secret"), undefined);
    assert.deepEqual(
      containersOf(must(own, "StatefulSet"))[0]?.env?.find((e) => e.name === "REDIS_PASSWORD")?.valueFrom,
      {
        secretKeyRef: { name: "mine", key: "pw" },
      },
    );
  });

  it("ships every dashboard as a ConfigMap carrying the sidecar label", () => {
    const files = readdirSync(path.join(CHART, "dashboards"));
    const maps = allOn.filter((o) => o.kind === "ConfigMap" && o.metadata.name?.includes("-dashboard-"));
    assert.equal(maps.length, files.length);
    for (const map of maps) {
      assert.equal(map.metadata.labels?.["grafana_dashboard"], "1");
      const [[key, json]] = Object.entries(map["data"] as Record<string, string>) as [[string, string]];
      const dashboard = JSON.parse(json) as { uid: string; title: string };
      assert.deepEqual(
        dashboard,
        JSON.parse(readFileSync(path.join(CHART, "dashboards", key.replace(/^tessera-/, "")), "utf8")),
      );
      assert.match(dashboard.title, /^Tessera \/ /);
    }
  });

  it("renders monitors, rules and NetworkPolicies when asked", () => {
    assert.deepEqual(
      allOn
        .filter((o) => ["ServiceMonitor", "PodMonitor", "PrometheusRule"].includes(o.kind ?? ""))
        .map((o) => o.kind)
        .sort(),
      ["PodMonitor", "PrometheusRule", "ServiceMonitor"],
    );
    const policies = allOn.filter((o) => o.kind === "NetworkPolicy").map((o) => o.metadata.name);
    assert.deepEqual(policies, ["tessera-operator", "tessera-router", "tessera-workers", "tessera-redis"]);
    const redis = spec<{ ingress: { from: unknown[] }[] }>(must(allOn, "NetworkPolicy", "tessera-redis"));
    assert.deepEqual(redis.ingress[0]?.from, [
      { podSelector: { matchLabels: { "app.kubernetes.io/name": "tessera-worker" } } },
      { podSelector: { matchLabels: { "app.kubernetes.io/name": "tessera-router" } } },
      {
        podSelector: {
          matchLabels: {
            "app.kubernetes.io/name": "tessera",
            "app.kubernetes.io/instance": "tessera",
            "app.kubernetes.io/component": "operator",
          },
        },
      },
    ]);
    // The operator's per-model routers (pods named tessera-router) reach the workers, as the chart's does.
    const workers = spec<{ ingress: { from: unknown[]; ports?: unknown[] }[] }>(
      must(allOn, "NetworkPolicy", "tessera-workers"),
    );
    assert.deepEqual(workers.ingress[0]?.from[1], {
      podSelector: { matchLabels: { "app.kubernetes.io/name": "tessera-router" } },
    });
    assert.deepEqual(workers.ingress[0]?.ports, [{ port: "grpc", protocol: "TCP" }]);
    // The operator asks each new entry worker which model it serves (ListModels) before calling it Ready.
    assert.deepEqual(workers.ingress[0]?.from[2], redis.ingress[0]?.from[2]);
  });
});

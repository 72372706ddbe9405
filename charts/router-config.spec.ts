// The router the chart renders, in both discovery modes, checked with the router's own parsers: the
// config file (and, for static discovery, the endpoints file with roles beside it) as the container
// reads them from its ConfigMap; for Kubernetes discovery the ServiceAccount the pod runs as and the
// read-only Role on InferenceModels bound to it. Values the router would refuse are refused by the
// chart's schema first.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CHART, find, must, render, runHelm } from "../e2e/helm/chart-tool.ts";
import { createLogger } from "../services/kernel/log.ts";
import type { KubeObject } from "../services/kube/kube-object.ts";
import { loadRouterConfig, type RouterConfig } from "../services/router/config/router-config.ts";
import { createDiscovery } from "../services/router/discovery/create-discovery.ts";
import { KubernetesDiscovery } from "../services/router/discovery/kubernetes-discovery.ts";
import { parseEndpointsFile } from "../services/router/discovery/static-file-discovery.ts";

const ROUTER = [
  "--set",
  "router.enabled=true",
  "--set-json",
  'router.models=[{"id":"tiny-llama","tokenizer":"/models/tiny-llama"}]',
];

/** The router's config files from its ConfigMap, written to a folder and loaded as the router does. */
function loadRendered(objects: KubeObject[]): { config: RouterConfig; files: Record<string, string> } {
  const files = must(objects, "ConfigMap", "tessera-router")["data"] as Record<string, string>;
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-chart-router-"));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const loaded = loadRouterConfig(path.join(dir, "router.yaml"));
    assert.equal(loaded.error, undefined, loaded.error?.message);
    const config = loaded.value as RouterConfig;
    if (config.discovery.type === "static")
      assert.equal(config.discovery.file, path.join(dir, "endpoints.yaml"));
    return { config, files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type PodSpec = { serviceAccountName?: string; automountServiceAccountToken?: boolean };
const podSpecOf = (objects: KubeObject[]) =>
  (must(objects, "Deployment", "tessera-router")["spec"] as { template: { spec: PodSpec } }).template.spec;

async function refused(flags: string[], pattern: RegExp): Promise<void> {
  const result = await runHelm(["template", "tessera", CHART, "--namespace", "tessera-system", ...flags]);
  assert.notEqual(result.code, 0, "helm template should fail");
  assert.match(result.stderr, pattern);
}

describe("the chart's router config, read by the router's own parser", function () {
  this.timeout(60_000);

  it("static discovery: the endpoints file, roles included, passes the router's parsers; no Kubernetes access", async () => {
    const endpoints = [
      { name: "prefill-0", address: "10.0.0.7:50051", role: "prefill" },
      { address: "10.0.0.8:50051", role: "decode" },
      { address: "10.0.0.9:50051" },
    ];
    const objects = await render(
      ...ROUTER,
      "--set-json",
      `router.discovery=${JSON.stringify({ type: "static", endpoints })}`,
    );
    const { config, files } = loadRendered(objects);
    assert.equal(config.discovery.type, "static");
    assert.deepEqual(config.models, [{ id: "tiny-llama", tokenizer: "/models/tiny-llama" }]);
    const parsed = parseEndpointsFile(files["endpoints.yaml"] ?? "");
    assert.equal(parsed.error, undefined, parsed.error?.message);
    assert.deepEqual(parsed.value, [
      { name: "prefill-0", address: "10.0.0.7:50051", role: "prefill" },
      { name: "10.0.0.8:50051", address: "10.0.0.8:50051", role: "decode" },
      { name: "10.0.0.9:50051", address: "10.0.0.9:50051" },
    ]);
    assert.deepEqual(podSpecOf(objects).automountServiceAccountToken, false);
    for (const kind of ["ServiceAccount", "Role", "RoleBinding"])
      assert.equal(find(objects, kind, "tessera-router"), undefined, kind);
  });

  it("kubernetes discovery: the router's parser accepts it and builds a Kubernetes discovery; the pod runs as an account with a read-only Role on InferenceModels", async () => {
    const objects = await render(
      ...ROUTER,
      "--set-json",
      'router.discovery={"type":"kubernetes","inferenceModel":"tiny-llama"}',
    );
    const { config, files } = loadRendered(objects);
    assert.deepEqual(config.discovery, {
      type: "kubernetes",
      namespace: "tessera-system",
      inferenceModel: "tiny-llama",
    });
    assert.equal(files["endpoints.yaml"], undefined);
    const log = createLogger("router", "error");
    // In the pod: no kubeconfig, the service account's token and the API server's address from env.
    const discovery = createDiscovery(config.discovery, log, {
      KUBERNETES_SERVICE_HOST: "10.96.0.1",
      KUBERNETES_SERVICE_PORT: "443",
    });
    assert.ok(discovery instanceof KubernetesDiscovery);

    const pod = podSpecOf(objects);
    assert.equal(pod.serviceAccountName, "tessera-router");
    assert.equal(pod.automountServiceAccountToken, true);
    must(objects, "ServiceAccount", "tessera-router");
    const role = must(objects, "Role", "tessera-router");
    assert.equal(role.metadata.namespace, "tessera-system");
    assert.deepEqual(role["rules"], [
      { apiGroups: ["serving.tessera.dev"], resources: ["inferencemodels"], verbs: ["get", "list", "watch"] },
    ]);
    const binding = must(objects, "RoleBinding", "tessera-router");
    assert.deepEqual(binding["roleRef"], {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "tessera-router",
    });
    assert.deepEqual(binding["subjects"], [
      { kind: "ServiceAccount", name: "tessera-router", namespace: "tessera-system" },
    ]);
    // Nothing else of the router's may write to the API or read other kinds.
    const routerRbac = objects.filter(
      (o) => (o.kind === "Role" || o.kind === "ClusterRole") && (o.metadata.name ?? "").includes("router"),
    );
    assert.equal(routerRbac.length, 1);
  });

  it("kubernetes discovery in another namespace, with a kubeconfig and context: the Role lives there, the config carries them", async () => {
    const objects = await render(
      ...ROUTER,
      "--set-json",
      'router.discovery={"type":"kubernetes","inferenceModel":"m","namespace":"models","kubeconfig":"/etc/kube/config","context":"prod"}',
    );
    const { config } = loadRendered(objects);
    assert.deepEqual(config.discovery, {
      type: "kubernetes",
      namespace: "models",
      inferenceModel: "m",
      kubeconfig: "/etc/kube/config",
      context: "prod",
    });
    assert.equal(must(objects, "Role", "tessera-router").metadata.namespace, "models");
    assert.equal(must(objects, "RoleBinding", "tessera-router").metadata.namespace, "models");
  });

  it("the schema refuses what the router would: kubernetes without an InferenceModel, an unknown role", async () => {
    await refused(
      ["--set", "router.enabled=true", "--set-json", 'router.discovery={"type":"kubernetes"}'],
      /inferenceModel/,
    );
    await refused(
      [
        ...ROUTER,
        "--set-json",
        'router.discovery={"type":"static","endpoints":[{"address":"10.0.0.7:50051","role":"encode"}]}',
      ],
      /\/router\/discovery\/endpoints\/0\/role/,
    );
  });
});

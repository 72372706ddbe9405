import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { bindAddressOf, parseOperatorConfig, resolveConnection } from "./operator-config.ts";

const kubeconfig = (server: string, namespace: string) => `current-context: c
clusters: [{name: c, cluster: {server: "${server}"}}]
contexts: [{name: c, context: {cluster: c, namespace: ${namespace}}}]
users: []
`;

describe("operator config", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-operator-config-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("defaults to one namespace, leader election and ports 8080/8081", () => {
    const config = parseOperatorConfig({});
    assert.deepEqual(config.value, {
      allNamespaces: false,
      leaderElect: true,
      leaseName: "tessera-operator",
      metricsPort: 8080,
      healthPort: 8081,
      workers: 4,
      servedNameCheck: true,
      cleanupTimeoutSeconds: 60,
    });
  });

  it("listens on loopback out of cluster, on every interface in a pod, and where told", () => {
    const config = parseOperatorConfig({}).value!;
    assert.equal(bindAddressOf(config, {}), "127.0.0.1");
    assert.equal(bindAddressOf(config, { KUBERNETES_SERVICE_HOST: "10.0.0.1" }), "0.0.0.0");
    const told = parseOperatorConfig({ bindAddress: "127.1.0.9" }).value!;
    assert.equal(bindAddressOf(told, { KUBERNETES_SERVICE_HOST: "10.0.0.1" }), "127.1.0.9");
  });

  it("names the bad field", () => {
    assert.match(parseOperatorConfig({ workers: 0 }).error?.message ?? "", /^workers: /);
    assert.match(
      parseOperatorConfig({ namespace: "a", allNamespaces: true }).error?.message ?? "",
      /^namespace: give --namespace or --all-namespaces/,
    );
    assert.match(
      parseOperatorConfig({ metricsPort: 9000, healthPort: 9000 }).error?.message ?? "",
      /^healthPort: /,
    );
  });

  it("finds the API: --kubeconfig, then $KUBECONFIG, then in-cluster, then ~/.kube/config", () => {
    const flag = path.join(dir, "flag");
    const envFile = path.join(dir, "env");
    writeFileSync(flag, kubeconfig("https://flag:1", "a"));
    writeFileSync(envFile, kubeconfig("https://env:1", "b"));
    const config = parseOperatorConfig({}).value!;
    assert.equal(
      resolveConnection({ ...config, kubeconfig: flag }, { KUBECONFIG: envFile }).server,
      "https://flag:1",
    );
    const fromEnv = resolveConnection(config, { KUBECONFIG: `${envFile}${path.delimiter}/nowhere` });
    assert.deepEqual([fromEnv.server, fromEnv.namespace], ["https://env:1", "b"]);
    assert.throws(() => resolveConnection(config, { HOME: dir }), /--kubeconfig: no kubeconfig given/);
  });
});

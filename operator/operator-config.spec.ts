import assert from "node:assert/strict";
import { bindAddressOf, parseOperatorConfig } from "./operator-config.ts";

describe("operator config", () => {
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
});

import assert from "node:assert/strict";
import { parse } from "yaml";
import { kubeconfigYaml } from "./kubeconfig.ts";

describe("kubeconfig", () => {
  it("points one context at the server with its CA and a default namespace", () => {
    const config = parse(
      kubeconfigYaml({ server: "https://127.0.0.1:6443", caCert: "PEM", namespace: "apps" }),
    );
    assert.equal(config["current-context"], "tessera-dev");
    assert.equal(config.clusters[0].cluster.server, "https://127.0.0.1:6443");
    assert.equal(
      Buffer.from(config.clusters[0].cluster["certificate-authority-data"], "base64").toString(),
      "PEM",
    );
    assert.equal(config.contexts[0].context.namespace, "apps");
  });
});

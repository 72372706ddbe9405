import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connectionFromKubeconfig, inClusterConnection } from "./kubeconfig.ts";

describe("kubeconfig", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-kubeconfig-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };

  it("reads the current context: server, CA data, token and namespace", () => {
    const file = write(
      "config",
      `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443/", certificate-authority-data: ${Buffer.from("CA").toString("base64")}}
users:
- name: u
  user: {token: secret}
contexts:
- name: dev
  context: {cluster: c, user: u, namespace: models}
`,
    );
    assert.deepEqual(connectionFromKubeconfig(file), {
      server: "https://127.0.0.1:6443",
      ca: "CA",
      insecureSkipTlsVerify: false,
      token: "secret",
      namespace: "models",
    });
  });

  it("resolves file references against the kubeconfig's folder and picks a named context", () => {
    write("ca.crt", "CA-FILE");
    write("client.crt", "CERT");
    write("client.key", "KEY");
    const file = write(
      "config",
      `current-context: a
clusters:
- {name: c, cluster: {server: "https://h:1", certificate-authority: ca.crt}}
- {name: d, cluster: {server: "https://h:2", insecure-skip-tls-verify: true}}
users:
- {name: u, user: {client-certificate: client.crt, client-key: client.key}}
contexts:
- {name: a, context: {cluster: c, user: u}}
- {name: b, context: {cluster: d}}
`,
    );
    const a = connectionFromKubeconfig(file);
    assert.deepEqual([a.ca, a.cert, a.key, a.namespace], ["CA-FILE", "CERT", "KEY", "default"]);
    const b = connectionFromKubeconfig(file, "b");
    assert.deepEqual([b.server, b.insecureSkipTlsVerify], ["https://h:2", true]);
  });

  it("names what is missing", () => {
    const file = write("config", "current-context: nope\ncontexts: []\n");
    assert.throws(() => connectionFromKubeconfig(file), /no context "nope"/);
    assert.throws(
      () => connectionFromKubeconfig(path.join(dir, "missing")),
      /kubeconfig .*missing: cannot read it/,
    );
  });

  it("builds the in-cluster connection from the service account", () => {
    write("ca.crt", "CA");
    write("namespace", "tessera-system\n");
    assert.equal(inClusterConnection({}, dir), undefined);
    const connection = inClusterConnection(
      { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" },
      dir,
    );
    assert.deepEqual(connection, {
      server: "https://10.0.0.1:443",
      ca: "CA",
      insecureSkipTlsVerify: false,
      tokenFile: path.join(dir, "token"),
      namespace: "tessera-system",
    });
  });
});

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { loadClusterConnection, mergeKubeconfigFiles } from "./kubeconfig.ts";

describe("kubeconfig: found and merged as kubectl does", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-kubeconfig-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A kubeconfig with one cluster, user and context each, all named `name`. */
  const write = (file: string, name: string, server: string, extra: Record<string, unknown> = {}) => {
    const full = path.join(dir, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(
      full,
      stringify({
        clusters: [{ name, cluster: { server } }],
        users: [{ name, user: { token: `${name}-token` } }],
        contexts: [{ name, context: { cluster: name, user: name, namespace: `${name}-ns` } }],
        ...extra,
      }),
    );
    return full;
  };

  it("finds the API: --kubeconfig, then $KUBECONFIG, then in cluster, then ~/.kube/config", () => {
    const flag = write("flag", "f", "https://flag:1", { "current-context": "f" });
    const env = write("env", "e", "https://env:1", { "current-context": "e" });
    write(".kube/config", "h", "https://home:1", { "current-context": "h" });
    const sa = path.join(dir, "sa");
    mkdirSync(sa);
    writeFileSync(path.join(sa, "ca.crt"), "");
    writeFileSync(path.join(sa, "namespace"), "pod-ns\n");
    const inCluster = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
    const load = (kubeconfig: string | undefined, env: Record<string, string>) =>
      loadClusterConnection({ kubeconfig, env: { HOME: dir, ...env }, serviceAccountDir: sa });
    assert.equal(load(flag, { KUBECONFIG: env, ...inCluster }).server, "https://flag:1");
    assert.equal(load(undefined, { KUBECONFIG: env, ...inCluster }).server, "https://env:1");
    const pod = load(undefined, inCluster);
    assert.deepEqual([pod.server, pod.namespace], ["https://[fd00::1]:443", "pod-ns"]);
    assert.deepEqual([load(undefined, {}).server, load(undefined, {}).namespace], ["https://home:1", "h-ns"]);
    assert.throws(
      () => loadClusterConnection({ env: {} }),
      /--kubeconfig: no kubeconfig given, \$KUBECONFIG unset, not in a cluster, and no ~\/.kube\/config/,
    );
  });

  it("$KUBECONFIG: the first file to name a cluster, user or context wins, and the first current-context; missing files are skipped", () => {
    const a = write("a", "shared", "https://a:1");
    const b = write("b", "shared", "https://b:1", {
      "current-context": "shared",
      clusters: [
        { name: "shared", cluster: { server: "https://b:1" } },
        { name: "only-b", cluster: { server: "https://only-b:1" } },
      ],
      contexts: [
        { name: "shared", context: { cluster: "shared", user: "shared" } },
        { name: "other", context: { cluster: "only-b" } },
      ],
    });
    const c = write("c", "c", "https://c:1", { "current-context": "other" });
    const env = { KUBECONFIG: [a, path.join(dir, "missing"), b, c].join(path.delimiter) };
    const merged = loadClusterConnection({ env });
    assert.deepEqual(
      [merged.context, merged.server, merged.namespace],
      ["shared", "https://a:1", "shared-ns"],
    );
    const other = loadClusterConnection({ env, context: "other" });
    assert.deepEqual([other.server, other.namespace], ["https://only-b:1", "default"]);
    assert.deepEqual(
      mergeKubeconfigFiles([a, b, c])
        .getUsers()
        .map((u) => [u.name, u.token]),
      [
        ["shared", "shared-token"],
        ["c", "c-token"],
      ],
    );
  });

  it("resolves file references against the folder of the file that names them", () => {
    const file = write("sub/config", "x", "https://x:1", {
      "current-context": "x",
      clusters: [{ name: "x", cluster: { server: "https://x:1", "certificate-authority": "ca.crt" } }],
      users: [{ name: "x", user: { "client-certificate": "certs/c.crt", "client-key": "/abs/c.key" } }],
    });
    const config = mergeKubeconfigFiles([file]);
    assert.equal(config.getCluster("x")?.caFile, path.join(dir, "sub", "ca.crt"));
    assert.deepEqual(
      [config.getUser("x")?.certFile, config.getUser("x")?.keyFile],
      [path.join(dir, "sub", "certs", "c.crt"), "/abs/c.key"],
    );
  });

  it("names what is missing or refused: a file, a context, its user, a plain-HTTP server", () => {
    const file = (extra: Record<string, unknown>) => write("config", "x", "https://x:1", extra);
    assert.throws(
      () => loadClusterConnection({ kubeconfig: path.join(dir, "nope"), env: {} }),
      /--kubeconfig .*nope: cannot read it/,
    );
    assert.throws(
      () => loadClusterConnection({ kubeconfig: file({ "current-context": "x" }), context: "y", env: {} }),
      /--kubeconfig: no context "y"/,
    );
    assert.throws(
      () => loadClusterConnection({ kubeconfig: file({}), env: {}, field: "discovery.kubeconfig" }),
      /discovery\.kubeconfig: no current context/,
    );
    assert.throws(
      () =>
        loadClusterConnection({
          kubeconfig: write("http", "h", "http://h:8001", { "current-context": "h" }),
          env: {},
        }),
      /cluster "h": http:\/\/h:8001 is plain HTTP/,
    );
    const dangling = file({
      "current-context": "d",
      contexts: [{ name: "d", context: { cluster: "x", user: "ghost" } }],
    });
    assert.throws(
      () => loadClusterConnection({ kubeconfig: dangling, env: {} }),
      /context "d" names user "ghost", which is not there/,
    );
  });
});

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { KubeApiError } from "./api-error.ts";
import { HttpsKubeClient } from "./https-client.ts";
import { loadClusterConnection } from "./kubeconfig.ts";
import { PODS } from "./resources.ts";
import {
  type ConnectProxy,
  type RecordingApiServer,
  startConnectProxy,
  startRecordingApiServer,
} from "./testing/recording-api-server.ts";

// An exec credential plugin as kubectl runs them: a script that prints an ExecCredential. Each call
// hands out the next token (t1, t2, ...) and saves the KUBERNETES_EXEC_INFO it was given.
const PLUGIN = `#!/bin/sh
n=$(( $(cat "$DIR/calls" 2>/dev/null || echo 0) + 1 ))
echo $n > "$DIR/calls"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$DIR/exec-info"
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"t%s","expirationTimestamp":"%s"}}' "$API_VERSION" "$n" "$EXPIRES"
`;

describe("cluster connection: authentication and proxies as kubectl", () => {
  let dir: string;
  let api: RecordingApiServer;
  const clients: HttpsKubeClient[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-connection-"));
    api = await startRecordingApiServer();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const kubeconfig = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) => {
    const file = path.join(dir, "config");
    writeFileSync(
      file,
      stringify({
        "current-context": "c",
        clusters: [
          {
            name: "c",
            cluster: {
              server: api.url,
              "certificate-authority-data": Buffer.from(api.cert).toString("base64"),
              ...cluster,
            },
          },
        ],
        users: [{ name: "u", user }],
        contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      }),
    );
    return file;
  };
  const client = (file: string, env: Record<string, string> = {}) => {
    const c = new HttpsKubeClient(loadClusterConnection({ kubeconfig: file, env }), { fieldManager: "test" });
    clients.push(c);
    return c;
  };
  const list = (c: HttpsKubeClient) => c.list(PODS, { namespace: "default" });
  const tokens = () => api.seen.map((s) => s.token);

  const execUser = (apiVersion: string, expires: string) => ({
    exec: {
      apiVersion: `client.authentication.k8s.io/${apiVersion}`,
      command: "./plugin.sh",
      env: [
        { name: "DIR", value: dir },
        { name: "API_VERSION", value: `client.authentication.k8s.io/${apiVersion}` },
        { name: "EXPIRES", value: expires },
      ],
      ...(apiVersion === "v1" ? { interactiveMode: "Never" } : {}),
    },
  });
  const writePlugin = () => {
    writeFileSync(path.join(dir, "plugin.sh"), PLUGIN);
    chmodSync(path.join(dir, "plugin.sh"), 0o755);
  };

  it("exec plugin v1beta1: runs the command beside the kubeconfig, and again once its credential expired", async () => {
    writePlugin();
    const c = client(kubeconfig(execUser("v1beta1", "2001-01-01T00:00:00Z")));
    await list(c);
    await list(c);
    assert.deepEqual(tokens(), ["t1", "t2"]);
    assert.deepEqual(JSON.parse(readFileSync(path.join(dir, "exec-info"), "utf8")), {
      apiVersion: "client.authentication.k8s.io/v1beta1",
      kind: "ExecCredential",
      spec: { interactive: false },
    });
  });

  it("exec plugin v1: keeps a credential until it expires, and asks again when the server answers 401", async () => {
    writePlugin();
    const c = client(kubeconfig(execUser("v1", "2999-01-01T00:00:00Z")));
    await list(c);
    await list(c);
    api.accept = (token) => token !== "t1";
    await list(c);
    assert.deepEqual(tokens(), ["t1", "t1", "t1", "t2"]);
    assert.equal(readFileSync(path.join(dir, "calls"), "utf8").trim(), "2");
  });

  it("refuses exec plugins kubectl refuses, naming the field", () => {
    writePlugin();
    const alpha = kubeconfig({ exec: { apiVersion: "client.authentication.k8s.io/v1alpha1", command: "x" } });
    assert.throws(() => client(alpha), /users\[u\]\.exec\.apiVersion: .*v1alpha1/);
    const v1 = kubeconfig({ exec: { apiVersion: "client.authentication.k8s.io/v1", command: "x" } });
    assert.throws(() => client(v1), /users\[u\]\.exec\.interactiveMode: required for v1/);
  });

  it("an exec plugin that fails is a 401 naming its error", async () => {
    writeFileSync(path.join(dir, "plugin.sh"), "#!/bin/sh\necho 'token expired, run login' >&2\nexit 1\n");
    chmodSync(path.join(dir, "plugin.sh"), 0o755);
    const err = await list(client(kubeconfig(execUser("v1", "")))).catch((e: unknown) => e);
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.status, 401);
    assert.match(err.message, /cannot get credentials: token expired, run login/);
  });

  it("tokenFile: re-read when the server refuses the old token (a rotated service-account token)", async () => {
    writeFileSync(path.join(dir, "token"), "first\n");
    const c = client(kubeconfig({ tokenFile: "token" }));
    await list(c);
    writeFileSync(path.join(dir, "token"), "second\n");
    api.accept = (token) => token === "second";
    await list(c);
    assert.deepEqual(tokens(), ["first", "first", "second"]);
  });

  it("OIDC: an unexpired id-token of the oidc auth-provider is the bearer token", async () => {
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const idToken = `${part({ alg: "RS256" })}.${part({ iss: "https://issuer.invalid", exp: 4_102_444_800 })}.sig`;
    const oidc = {
      name: "oidc",
      config: { "id-token": idToken, "client-id": "tessera", "idp-issuer-url": "https://issuer.invalid" },
    };
    await list(client(kubeconfig({ "auth-provider": oidc })));
    assert.deepEqual(tokens(), [idToken]);
  });

  it("client certificate from a file and key from data; a static token", async () => {
    writeFileSync(path.join(dir, "client.crt"), api.cert);
    await list(
      client(
        kubeconfig({
          "client-certificate": "client.crt",
          "client-key-data": Buffer.from(api.key).toString("base64"),
          token: "static",
        }),
      ),
    );
    assert.deepEqual(api.seen, [{ token: "static", clientCertificate: "tessera-devcluster" }]);
  });

  it("in cluster: the service account's token, CA and namespace, from KUBERNETES_SERVICE_HOST/PORT", async () => {
    const sa = path.join(dir, "serviceaccount");
    mkdirSync(sa);
    writeFileSync(path.join(sa, "token"), "sa-token");
    writeFileSync(path.join(sa, "ca.crt"), api.cert);
    writeFileSync(path.join(sa, "namespace"), "models");
    const connection = loadClusterConnection({
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(api.port), HOME: dir },
      serviceAccountDir: sa,
    });
    const c = new HttpsKubeClient(connection, { fieldManager: "test" });
    clients.push(c);
    await list(c);
    assert.deepEqual([connection.server, connection.namespace, tokens()], [api.url, "models", ["sa-token"]]);
  });

  describe("proxies", () => {
    let proxy: ConnectProxy;
    beforeEach(async () => {
      proxy = await startConnectProxy();
    });
    afterEach(() => proxy.close());

    // A server name that only the proxy can reach; the certificate is checked for tls-server-name.
    const remote = () => ({ server: `https://kube.invalid:${api.port}`, "tls-server-name": "localhost" });

    it("proxy-url: tunnels through the cluster's proxy", async () => {
      await list(client(kubeconfig({ token: "p" }, { ...remote(), "proxy-url": proxy.url })));
      assert.deepEqual([proxy.targets, tokens()], [[`kube.invalid:${api.port}`], ["p"]]);
    });

    it("HTTPS_PROXY from the environment, unless NO_PROXY names the host or the server is loopback", async () => {
      await list(client(kubeconfig({ token: "p" }, remote()), { HTTPS_PROXY: proxy.url }));
      assert.deepEqual(proxy.targets, [`kube.invalid:${api.port}`]);
      const bypassed = client(kubeconfig({ token: "p" }, remote()), {
        HTTPS_PROXY: proxy.url,
        NO_PROXY: "kube.invalid",
      });
      await assert.rejects(list(bypassed), /ENOTFOUND kube\.invalid/);
      await list(client(kubeconfig({ token: "p" }), { HTTPS_PROXY: proxy.url }));
      assert.deepEqual(proxy.targets, [`kube.invalid:${api.port}`]);
    });
  });
});

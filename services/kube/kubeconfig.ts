// Where the API server is and who we are, found as kubectl and controller-runtime find it:
// the --kubeconfig file, else every file of $KUBECONFIG merged, else the pod's service account
// (KUBERNETES_SERVICE_HOST + /var/run/secrets/kubernetes.io/serviceaccount), else ~/.kube/config.
//
// @kubernetes/client-node's KubeConfig parses each file (clusters, users, contexts, CA, client
// certificates, insecure-skip-tls-verify, tls-server-name, proxy-url, exec, auth-provider) and
// authenticates (cluster-connection.ts). What this file adds is where client-node differs from kubectl:
// - merging: kubectl's first file to name a cluster, user or context wins, and so does the first
//   current-context; files of $KUBECONFIG that do not exist are skipped (client-node throws on a
//   duplicate name and lets the last file's current-context win);
// - the user's `tokenFile` (client-node reads only a `token-file` no kubectl writes), handed to
//   client-node's token-file authenticator so a rotated token is picked up;
// - exec plugins: only client.authentication.k8s.io v1 and v1beta1 (v1 needs interactiveMode, and we
//   have no terminal, so `Always` is refused), a command with a path separator resolves against the
//   kubeconfig's folder, and the plugin gets KUBERNETES_EXEC_INFO (with the cluster when
//   provideClusterInfo is set), as kubectl gives it;
// - in cluster: the injected environment rather than process.env, always https (client-node picks
//   http for ports 80, 8080 and 8001);
// - a context, cluster or user that is named but missing is refused, naming it, and so is a plain
//   http:// server without insecure-skip-tls-verify (kubectl talks to one; client-node refuses it).
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Cluster, type Context, KubeConfig, type User } from "@kubernetes/client-node";
import { parse } from "yaml";
import { TesseraError } from "../kernel/errors.ts";
import { ClusterConnection } from "./cluster-connection.ts";

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface KubeconfigSource {
  /** An explicit kubeconfig file (--kubeconfig): the only file read, and it must exist. */
  kubeconfig?: string | undefined;
  /** The context to use instead of the current context (--context). */
  context?: string | undefined;
  /** The process environment, read once: KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT, HOME, proxies. */
  env: Record<string, string | undefined>;
  /** The flag or config field named in errors (default "--kubeconfig"). */
  field?: string;
  /** Where the service account is mounted (tests use a temporary folder). */
  serviceAccountDir?: string;
}

/** The connection the source asks for; throws INVALID_ARGUMENT naming what is missing or wrong. */
export function loadClusterConnection(source: KubeconfigSource): ClusterConnection {
  const field = source.field ?? "--kubeconfig";
  const { config, namespace } = loadKubeConfig(source, field);
  if (source.context !== undefined) {
    if (!config.getContextObject(source.context))
      throw TesseraError.invalidArgument(field, `no context "${source.context}" in the kubeconfig`);
    config.setCurrentContext(source.context);
  }
  return new ClusterConnection(checked(config, field, namespace), source.env);
}

function loadKubeConfig(source: KubeconfigSource, field: string): { config: KubeConfig; namespace?: string } {
  const { env } = source;
  if (source.kubeconfig) return { config: mergeKubeconfigFiles([source.kubeconfig], field) };
  const files = (env["KUBECONFIG"] ?? "").split(path.delimiter).filter((f) => f !== "");
  if (files.length > 0) return { config: mergeKubeconfigFiles(files.filter(existsSync), field) };
  const inCluster = inClusterKubeConfig(env, source.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  if (inCluster) return inCluster;
  const home = path.join(env["HOME"] ?? os.homedir(), ".kube", "config");
  if (existsSync(home)) return { config: mergeKubeconfigFiles([home], field) };
  throw TesseraError.invalidArgument(
    field,
    "no kubeconfig given, $KUBECONFIG unset, not in a cluster, and no ~/.kube/config",
  );
}

/** kubectl's merge: the first file to name a cluster, user or context, or to set current-context, wins. */
export function mergeKubeconfigFiles(files: string[], field = "--kubeconfig"): KubeConfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext = "";
  for (const file of files) {
    const one = readKubeconfigFile(file, field);
    for (const c of one.clusters) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.users) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.contexts) if (!contexts.has(c.name)) contexts.set(c.name, c);
    currentContext ||= one.currentContext ?? "";
  }
  const merged = new KubeConfig();
  merged.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext,
  });
  return merged;
}

interface RawUser {
  name?: unknown;
  user?: { tokenFile?: unknown; exec?: { command?: unknown } } | null;
}

function readKubeconfigFile(file: string, field: string): KubeConfig {
  const where = `${field} ${file}`;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw TesseraError.invalidArgument(where, `cannot read it (${(err as Error).message})`);
  }
  const config = new KubeConfig();
  try {
    config.loadFromString(text);
  } catch (err) {
    throw TesseraError.invalidArgument(where, (err as Error).message);
  }
  const dir = path.dirname(path.resolve(file));
  config.makePathsAbsolute(dir);
  const raw = (parse(text) as { users?: RawUser[] } | null)?.users ?? [];
  config.users = config.users.map((user) => {
    const rawUser = raw.find((r) => r.name === user.name)?.user ?? {};
    return withExec(
      withTokenFile(user, rawUser.tokenFile, dir),
      config,
      `${where}: users[${user.name}]`,
      dir,
    );
  });
  return config;
}

/** kubectl's `tokenFile`, re-read by client-node's token-file authenticator (once a minute, as client-go). */
function withTokenFile(user: User, tokenFile: unknown, dir: string): User {
  if (typeof tokenFile !== "string" || tokenFile === "" || user.token) return user;
  return {
    ...user,
    authProvider: { name: "tokenFile", config: { tokenFile: path.resolve(dir, tokenFile) } },
  };
}

const EXEC_VERSIONS = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"];

interface ExecConfig {
  apiVersion?: string;
  command?: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  interactiveMode?: string;
  provideClusterInfo?: boolean;
}

function withExec(user: User, config: KubeConfig, where: string, dir: string): User {
  const exec = user.exec as ExecConfig | undefined | null;
  if (!exec) return user;
  if (!exec.apiVersion || !EXEC_VERSIONS.includes(exec.apiVersion))
    throw TesseraError.invalidArgument(
      `${where}.exec.apiVersion`,
      `"${exec.apiVersion ?? ""}" is not one of ${EXEC_VERSIONS.join(", ")}`,
    );
  if (!exec.command) throw TesseraError.invalidArgument(`${where}.exec.command`, "missing");
  if (exec.apiVersion.endsWith("/v1") && !exec.interactiveMode)
    throw TesseraError.invalidArgument(`${where}.exec.interactiveMode`, "required for v1");
  if (exec.interactiveMode === "Always")
    throw TesseraError.invalidArgument(
      `${where}.exec.interactiveMode`,
      "Always needs a terminal; this process has none",
    );
  const command =
    exec.command.includes(path.sep) && !path.isAbsolute(exec.command)
      ? path.resolve(dir, exec.command)
      : exec.command;
  const info = { apiVersion: exec.apiVersion, kind: "ExecCredential", spec: { interactive: false } };
  const execInfo = () => {
    if (!exec.provideClusterInfo) return info;
    const cluster = config.getCluster(config.getContexts().find((c) => c.user === user.name)?.cluster ?? "");
    return { ...info, spec: { ...info.spec, ...(cluster ? { cluster: clusterInfo(cluster) } : {}) } };
  };
  return {
    ...user,
    exec: {
      ...exec,
      command,
      env: [...(exec.env ?? []), { name: "KUBERNETES_EXEC_INFO", value: JSON.stringify(execInfo()) }],
    },
  };
}

function clusterInfo(cluster: Cluster): Record<string, unknown> {
  const ca = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString("base64") : undefined);
  return {
    server: cluster.server,
    ...(cluster.tlsServerName ? { "tls-server-name": cluster.tlsServerName } : {}),
    ...(cluster.skipTLSVerify ? { "insecure-skip-tls-verify": true } : {}),
    ...(ca ? { "certificate-authority-data": ca } : {}),
    ...(cluster.proxyUrl ? { "proxy-url": cluster.proxyUrl } : {}),
  };
}

/** The pod's service account, as client-go's InClusterConfig; undefined outside a cluster. */
export function inClusterKubeConfig(
  env: Record<string, string | undefined>,
  dir = SERVICE_ACCOUNT_DIR,
): { config: KubeConfig; namespace: string } | undefined {
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (!host || !port) return undefined;
  const name = "in-cluster";
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      {
        name,
        server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
        caFile: path.join(dir, "ca.crt"),
        skipTLSVerify: false,
      },
    ],
    users: [{ name, authProvider: { name: "tokenFile", config: { tokenFile: path.join(dir, "token") } } }],
    contexts: [{ name, cluster: name, user: name }],
    currentContext: name,
  });
  const namespace = readFileSync(path.join(dir, "namespace"), "utf8").trim();
  return { config, namespace };
}

/** The current context must name a cluster that exists, and a user that exists when it names one. */
function checked(
  config: KubeConfig,
  field: string,
  inClusterNamespace?: string,
): {
  config: KubeConfig;
  namespace: string;
} {
  const name = config.getCurrentContext();
  const context = name ? config.getContextObject(name) : null;
  if (!context)
    throw TesseraError.invalidArgument(
      field,
      name ? `no context "${name}" in the kubeconfig` : "no current context",
    );
  const cluster = config.getCluster(context.cluster);
  if (!cluster)
    throw TesseraError.invalidArgument(
      field,
      `context "${name}" names cluster "${context.cluster}", which is not there`,
    );
  if (cluster.server.startsWith("http:") && !cluster.skipTLSVerify)
    throw TesseraError.invalidArgument(
      field,
      `cluster "${cluster.name}": ${cluster.server} is plain HTTP, which @kubernetes/client-node accepts only with insecure-skip-tls-verify: true`,
    );
  if (context.user && !config.getUser(context.user))
    throw TesseraError.invalidArgument(
      field,
      `context "${name}" names user "${context.user}", which is not there`,
    );
  if (!context.user) {
    // client-node applies the cluster's CA only for a user: a context without one is anonymous.
    const anonymous = `${name}/anonymous`;
    config.users = [...config.users, { name: anonymous }];
    config.contexts = config.contexts.map((c) => (c.name === name ? { ...c, user: anonymous } : c));
  }
  return { config, namespace: inClusterNamespace ?? context.namespace ?? "default" };
}

// Where the API server is and how to authenticate: from a kubeconfig file (its current context), or
// in a pod from the service account (KUBERNETES_SERVICE_HOST + the mounted token and CA).
// Supported: server, CA (data or file), insecure-skip-tls-verify, bearer token (inline or file),
// client certificate and key (data or file). Exec plugins and auth providers are not.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { TesseraError } from "../kernel/errors.ts";

export interface ClusterConnection {
  /** https://host:port */
  server: string;
  ca?: string;
  insecureSkipTlsVerify: boolean;
  token?: string;
  /** Re-read on each request when set (projected service-account tokens rotate). */
  tokenFile?: string;
  cert?: string;
  key?: string;
  /** The context's namespace (kubeconfig) or the pod's (in cluster). */
  namespace: string;
}

const clusterSchema = z.object({
  server: z.string().min(1),
  "certificate-authority-data": z.string().optional(),
  "certificate-authority": z.string().optional(),
  "insecure-skip-tls-verify": z.boolean().optional(),
});

const userSchema = z
  .object({
    token: z.string().optional(),
    tokenFile: z.string().optional(),
    "client-certificate-data": z.string().optional(),
    "client-key-data": z.string().optional(),
    "client-certificate": z.string().optional(),
    "client-key": z.string().optional(),
  })
  .prefault({});

const contextSchema = z.object({
  cluster: z.string(),
  user: z.string().optional(),
  namespace: z.string().optional(),
});

const kubeconfigSchema = z.object({
  "current-context": z.string().optional(),
  clusters: z.array(z.object({ name: z.string(), cluster: clusterSchema })).default([]),
  users: z.array(z.object({ name: z.string(), user: userSchema })).default([]),
  contexts: z.array(z.object({ name: z.string(), context: contextSchema })).default([]),
});

const b64 = (data: string) => Buffer.from(data, "base64").toString("utf8");

/** Reads a kubeconfig file; relative file references resolve against its folder. */
export function connectionFromKubeconfig(file: string, contextName?: string): ClusterConnection {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw TesseraError.invalidArgument(`kubeconfig ${file}`, `cannot read it (${(err as Error).message})`);
  }
  const parsed = kubeconfigSchema.safeParse(parse(text));
  if (!parsed.success)
    throw TesseraError.invalidArgument(`kubeconfig ${file}`, z.prettifyError(parsed.error));
  const config = parsed.data;
  const wanted = contextName ?? config["current-context"];
  const context = config.contexts.find((c) => c.name === wanted)?.context;
  if (!context) throw TesseraError.invalidArgument(`kubeconfig ${file}`, `no context "${wanted ?? ""}"`);
  const cluster = config.clusters.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster) throw TesseraError.invalidArgument(`kubeconfig ${file}`, `no cluster "${context.cluster}"`);
  const user = config.users.find((u) => u.name === context.user)?.user ?? {};
  const read = (ref: string) => readFileSync(path.resolve(path.dirname(file), ref), "utf8");
  const ca = cluster["certificate-authority-data"]
    ? b64(cluster["certificate-authority-data"])
    : cluster["certificate-authority"] && read(cluster["certificate-authority"]);
  const cert = user["client-certificate-data"]
    ? b64(user["client-certificate-data"])
    : user["client-certificate"] && read(user["client-certificate"]);
  const key = user["client-key-data"]
    ? b64(user["client-key-data"])
    : user["client-key"] && read(user["client-key"]);
  return {
    server: cluster.server.replace(/\/$/, ""),
    insecureSkipTlsVerify: cluster["insecure-skip-tls-verify"] === true,
    namespace: context.namespace ?? "default",
    ...(ca ? { ca } : {}),
    ...(user.token ? { token: user.token } : {}),
    ...(user.tokenFile ? { tokenFile: path.resolve(path.dirname(file), user.tokenFile) } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
  };
}

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The in-cluster connection of a pod, or undefined outside a cluster. */
export function inClusterConnection(
  env: Record<string, string | undefined>,
  dir = SERVICE_ACCOUNT_DIR,
): ClusterConnection | undefined {
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (!host || !port) return undefined;
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    ca: readFileSync(path.join(dir, "ca.crt"), "utf8"),
    insecureSkipTlsVerify: false,
    tokenFile: path.join(dir, "token"),
    namespace: readFileSync(path.join(dir, "namespace"), "utf8").trim(),
  };
}

// The kubeconfig clients use to reach the dev cluster: the server URL, its CA, and a context
// whose namespace is "default"; the user is a client certificate (the admin's, in system:masters)
// or a token.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";

export interface KubeconfigOptions {
  server: string;
  caCert: string;
  name?: string;
  namespace?: string;
  /** The user's client certificate and key. */
  client?: { cert: string; key: string };
  /** Or a bearer token, or a file it is read from (as the kubelet mounts a service account's). */
  token?: string;
  tokenFile?: string;
}

function userEntry(options: KubeconfigOptions): Record<string, string> {
  if (options.client)
    return {
      "client-certificate-data": Buffer.from(options.client.cert).toString("base64"),
      "client-key-data": Buffer.from(options.client.key).toString("base64"),
    };
  if (options.tokenFile) return { tokenFile: options.tokenFile };
  return options.token ? { token: options.token } : {};
}

export function kubeconfigYaml(options: KubeconfigOptions): string {
  const name = options.name ?? "tessera-dev";
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name,
        cluster: {
          server: options.server,
          "certificate-authority-data": Buffer.from(options.caCert).toString("base64"),
        },
      },
    ],
    users: [{ name, user: userEntry(options) }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? "default" } }],
    "current-context": name,
    preferences: {},
  });
}

export async function writeKubeconfig(file: string, options: KubeconfigOptions): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, kubeconfigYaml(options), { mode: 0o600 });
}

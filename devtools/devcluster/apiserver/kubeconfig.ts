// The kubeconfig clients use to reach the dev cluster: the server URL, its CA, and a context
// whose namespace is "default". The server does not authenticate, so the user is a token stub.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";

export interface KubeconfigOptions {
  server: string;
  caCert: string;
  name?: string;
  namespace?: string;
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
    users: [{ name, user: { token: "tessera-dev" } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? "default" } }],
    "current-context": name,
    preferences: {},
  });
}

export async function writeKubeconfig(file: string, options: KubeconfigOptions): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, kubeconfigYaml(options), { mode: 0o600 });
}

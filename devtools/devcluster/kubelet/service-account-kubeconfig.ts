// The dev cluster's stand-in for in-cluster configuration. Pod processes run on the host, where
// /var/run/secrets/kubernetes.io/serviceaccount cannot be theirs, and programs read that fixed path
// without it appearing in their command line (so volume path rewriting cannot reach it). The
// kubelet therefore writes, for a container that mounts its service account's token volume, a
// kubeconfig whose user is that volume's token file (re-read as the kubelet rotates it), whose CA is
// its ca.crt and whose namespace is its namespace file, and gives it to the container as KUBECONFIG:
// a client in the pod authenticates as its service account, as in-cluster configuration would.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SERVICE_ACCOUNT_MOUNT } from "../apiserver/cluster/service-account-admission.ts";
import { kubeconfigYaml } from "../apiserver/kubeconfig.ts";
import type { Container } from "../objects/pod-types.ts";

/** The host folder of the token volume a container mounts at the service-account path, if any. */
export function serviceAccountVolumeDir(
  container: Container,
  volumes: ReadonlyMap<string, string>,
): string | undefined {
  const mount = (container.volumeMounts ?? []).find(
    (m) => m.mountPath.replace(/\/+$/, "") === SERVICE_ACCOUNT_MOUNT && !m.subPath,
  );
  return mount ? volumes.get(mount.name) : undefined;
}

/** Writes `<volumeDir>.kubeconfig` for a token volume and returns its path. */
export function writeServiceAccountKubeconfig(volumeDir: string, server: string): string {
  const file = `${volumeDir.replace(/\/+$/, "")}.kubeconfig`;
  const read = (name: string) => readFileSync(path.join(volumeDir, name), "utf8");
  writeFileSync(
    file,
    kubeconfigYaml({
      server,
      caCert: read("ca.crt"),
      tokenFile: path.join(volumeDir, "token"),
      namespace: read("namespace").trim(),
      name: "in-cluster",
    }),
    { mode: 0o600 },
  );
  return file;
}

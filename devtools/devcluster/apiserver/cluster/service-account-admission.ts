// The ServiceAccount admission plugin, as kube-apiserver runs it on pod creation: the pod runs as
// spec.serviceAccountName ("default" when unset), and unless the pod or its service account sets
// automountServiceAccountToken: false, it gets the projected `kube-api-access-<random>` volume
// (a bound token, the cluster CA from the kube-root-ca.crt ConfigMap, the namespace) mounted
// read-only at /var/run/secrets/kubernetes.io/serviceaccount in every container that does not
// mount something there itself.
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { generateName } from "./admission.ts";

export const SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";
export const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";
/** What kube-apiserver asks for: a token the kubelet refreshes well before it expires. */
const TOKEN_SECONDS = 3607;

type Json = Record<string, unknown>;

function tokenVolume(name: string): Json {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_SECONDS, path: "token" } },
        { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: "ca.crt", path: "ca.crt" }] } },
        {
          downwardAPI: {
            items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
          },
        },
      ],
    },
  };
}

/** Mutates a pod being created; `account`: its service account when it exists. */
export function admitServiceAccount(pod: KubeObject, account: KubeObject | undefined): void {
  const spec = (pod["spec"] ?? {}) as Json;
  pod["spec"] = spec;
  const name =
    typeof spec["serviceAccountName"] === "string" && spec["serviceAccountName"]
      ? spec["serviceAccountName"]
      : "default";
  spec["serviceAccountName"] = name;
  spec["serviceAccount"] = name;
  const automount =
    typeof spec["automountServiceAccountToken"] === "boolean"
      ? spec["automountServiceAccountToken"]
      : account?.["automountServiceAccountToken"] !== false;
  if (!automount) return;
  const volumes = (Array.isArray(spec["volumes"]) ? spec["volumes"] : []) as Json[];
  const containers = ["initContainers", "containers"].flatMap(
    (list) => (Array.isArray(spec[list]) ? spec[list] : []) as Json[],
  );
  const needing = containers.filter(
    (c) => !((c["volumeMounts"] ?? []) as Json[]).some((m) => m["mountPath"] === SERVICE_ACCOUNT_MOUNT),
  );
  if (needing.length === 0) return;
  const volumeName = generateName("kube-api-access-");
  spec["volumes"] = [...volumes, tokenVolume(volumeName)];
  for (const container of needing)
    container["volumeMounts"] = [
      ...((container["volumeMounts"] ?? []) as Json[]),
      { name: volumeName, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT },
    ];
}

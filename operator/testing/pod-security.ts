// The checks of the "restricted" Pod Security Standard (v1.31) that apply to the pods the operator
// makes, returning what a pod violates (empty = admitted under enforce=restricted).
import { isObject, type KubeObject } from "../../services/kube/kube-object.ts";

const ALLOWED_VOLUMES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

export function restrictedViolations(pod: KubeObject): string[] {
  const spec = (pod["spec"] ?? {}) as Record<string, unknown>;
  const podContext = (spec["securityContext"] ?? {}) as Record<string, unknown>;
  const violations: string[] = [];
  for (const flag of ["hostNetwork", "hostPID", "hostIPC"]) if (spec[flag] === true) violations.push(flag);
  for (const volume of (spec["volumes"] ?? []) as Record<string, unknown>[]) {
    const kind = Object.keys(volume).find((k) => k !== "name");
    if (!kind || !ALLOWED_VOLUMES.has(kind)) violations.push(`volume ${String(volume["name"])} is ${kind}`);
  }
  const seccomp = (podContext["seccompProfile"] ?? {}) as Record<string, unknown>;
  const containers = [
    ...((spec["containers"] ?? []) as Record<string, unknown>[]),
    ...((spec["initContainers"] ?? []) as Record<string, unknown>[]),
  ];
  for (const c of containers) {
    const sc = (c["securityContext"] ?? {}) as Record<string, unknown>;
    const name = String(c["name"]);
    if (sc["privileged"] === true) violations.push(`${name}: privileged`);
    if (sc["allowPrivilegeEscalation"] !== false)
      violations.push(`${name}: allowPrivilegeEscalation != false`);
    if (sc["runAsNonRoot"] !== true && podContext["runAsNonRoot"] !== true)
      violations.push(`${name}: runAsNonRoot`);
    if (sc["runAsUser"] === 0 || podContext["runAsUser"] === 0) violations.push(`${name}: runAsUser 0`);
    const containerSeccomp = (sc["seccompProfile"] ?? seccomp) as Record<string, unknown>;
    if (!["RuntimeDefault", "Localhost"].includes(String(containerSeccomp["type"])))
      violations.push(`${name}: seccomp`);
    const caps = (sc["capabilities"] ?? {}) as Record<string, unknown>;
    if (!((caps["drop"] ?? []) as string[]).includes("ALL"))
      violations.push(`${name}: capabilities not dropping ALL`);
    const added = ((caps["add"] ?? []) as string[]).filter((cap) => cap !== "NET_BIND_SERVICE");
    if (added.length > 0) violations.push(`${name}: adds ${added.join(",")}`);
    for (const port of (c["ports"] ?? []) as Record<string, unknown>[])
      if (isObject(port) && port["hostPort"]) violations.push(`${name}: hostPort`);
  }
  return violations;
}

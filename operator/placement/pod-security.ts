// What every pod the operator creates (workers and routers) shares to meet the "restricted" Pod
// Security Standard: non-root, seccomp RuntimeDefault, no privilege escalation, every capability
// dropped and a read-only root file system, with an emptyDir at /scratch (also TMPDIR) as the only
// writable space; and the model's PVC, read-only, when the model comes from one.
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import { MODELS_MOUNT, SCRATCH_MOUNT } from "./shard-env.ts";

/** The user and group our image runs as (any non-zero id satisfies runAsNonRoot). */
export const NON_ROOT_UID = 65532;

export const RESTRICTED_POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: NON_ROOT_UID,
  runAsGroup: NON_ROOT_UID,
  fsGroup: NON_ROOT_UID,
  seccompProfile: { type: "RuntimeDefault" },
};

export const RESTRICTED_CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};

/** The pod's volumes: scratch space, and the model's PVC when it has one. */
export function modelVolumes(pvc: InferenceModelSpec["model"]["pvc"]) {
  return [
    { name: "scratch", emptyDir: {} },
    ...(pvc ? [{ name: "models", persistentVolumeClaim: { claimName: pvc.claimName, readOnly: true } }] : []),
  ];
}

/** Where a container mounts them. */
export function modelVolumeMounts(pvc: InferenceModelSpec["model"]["pvc"]) {
  return [
    { name: "scratch", mountPath: SCRATCH_MOUNT },
    ...(pvc ? [{ name: "models", mountPath: MODELS_MOUNT, readOnly: true }] : []),
  ];
}

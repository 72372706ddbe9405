// Every API call the operator makes, as RBAC rules: the one list the Role is generated from and that
// tests check the operator's calls against (least privilege: nothing here goes unused).
import { GROUP } from "../../services/api/group.ts";

export interface PermissionRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export const OPERATOR_PERMISSIONS: readonly PermissionRule[] = [
  {
    apiGroups: [GROUP],
    resources: ["inferencemodels", "workerpools"],
    verbs: ["get", "list", "watch", "patch"],
  },
  { apiGroups: [GROUP], resources: ["inferencemodels/status", "workerpools/status"], verbs: ["patch"] },
  // Pods and Services carry ownerReferences with blockOwnerDeletion to their InferenceModel.
  { apiGroups: [GROUP], resources: ["inferencemodels/finalizers"], verbs: ["update"] },
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "create", "patch", "delete"] },
  { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "create", "patch"] },
  // The router of each model (operator/router): its Deployment (watched for availability), its
  // identity and its read-only Role on inferencemodels (which the operator holds itself, as RBAC
  // requires of whoever grants it).
  { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch", "create", "patch"] },
  { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["create", "patch"] },
  // Its disruption budget: a node drain leaves all but one of the router pods serving.
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["create", "patch"] },
  {
    apiGroups: ["rbac.authorization.k8s.io"],
    resources: ["roles", "rolebindings"],
    verbs: ["create", "patch"],
  },
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  // The Redis password of a model's KV store, read when its keys are deleted with the model.
  { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
];

/** Whether the rules allow `verb` on `resource` (with subresource, e.g. "pods" or "inferencemodels/status"). */
export function allows(
  rules: readonly PermissionRule[],
  group: string,
  resource: string,
  verb: string,
): boolean {
  return rules.some(
    (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
  );
}

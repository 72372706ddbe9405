// The operator's ServiceAccount and RBAC: a namespaced Role by default (the operator watches one
// namespace), or a ClusterRole for an operator that watches every namespace.
import { OPERATOR_PERMISSIONS } from "./permissions.ts";

export const OPERATOR_NAME = "tessera-operator";

export interface RbacOptions {
  namespace: string;
  clusterWide?: boolean;
}

export function rbacManifests(options: RbacOptions): Record<string, unknown>[] {
  const { namespace } = options;
  const rules = OPERATOR_PERMISSIONS.map((r) => ({ ...r }));
  const subjects = [{ kind: "ServiceAccount", name: OPERATOR_NAME, namespace }];
  const serviceAccount = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: OPERATOR_NAME, namespace },
  };
  const rbac = "rbac.authorization.k8s.io";
  const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } };
  if (!options.clusterWide) {
    return [
      ns,
      serviceAccount,
      { apiVersion: `${rbac}/v1`, kind: "Role", metadata: { name: OPERATOR_NAME, namespace }, rules },
      {
        apiVersion: `${rbac}/v1`,
        kind: "RoleBinding",
        metadata: { name: OPERATOR_NAME, namespace },
        roleRef: { apiGroup: rbac, kind: "Role", name: OPERATOR_NAME },
        subjects,
      },
    ];
  }
  return [
    ns,
    serviceAccount,
    { apiVersion: `${rbac}/v1`, kind: "ClusterRole", metadata: { name: OPERATOR_NAME }, rules },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: OPERATOR_NAME },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: OPERATOR_NAME },
      subjects,
    },
  ];
}

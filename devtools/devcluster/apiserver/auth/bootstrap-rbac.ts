// The ClusterRoles and ClusterRoleBindings every kube-apiserver creates at start-up, as far as
// the dev cluster needs them: cluster-admin for system:masters, discovery and self-review for
// every authenticated user, health and version for everyone, and the user-facing view/edit/admin
// roles (flattened: aggregation is not supported).
import type { ClusterApi } from "../cluster/cluster-api.ts";

const RBAC = "rbac.authorization.k8s.io";
const CLUSTER_ROLES = { group: RBAC, version: "v1", resource: "clusterroles" };
const CLUSTER_ROLE_BINDINGS = { group: RBAC, version: "v1", resource: "clusterrolebindings" };
const LABELS = { "kubernetes.io/bootstrapping": "rbac-defaults" };

type Rule = Record<string, string[]>;

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete", "deletecollection"];
const NAMESPACED_READ: Rule[] = [
  {
    apiGroups: [""],
    resources: [
      "pods",
      "pods/log",
      "pods/status",
      "services",
      "endpoints",
      "configmaps",
      "persistentvolumeclaims",
      "serviceaccounts",
      "events",
      "replicationcontrollers",
      "resourcequotas",
      "limitranges",
    ],
    verbs: READ,
  },
  {
    apiGroups: ["apps"],
    resources: ["deployments", "deployments/scale", "replicasets", "statefulsets", "daemonsets"],
    verbs: READ,
  },
  { apiGroups: ["batch"], resources: ["jobs", "cronjobs"], verbs: READ },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: READ },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: READ },
];
const NAMESPACED_WRITE: Rule[] = [
  {
    apiGroups: [""],
    resources: [
      "pods",
      "services",
      "configmaps",
      "secrets",
      "persistentvolumeclaims",
      "serviceaccounts",
      "events",
    ],
    verbs: WRITE,
  },
  { apiGroups: [""], resources: ["secrets"], verbs: READ },
  { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] },
  {
    apiGroups: ["apps"],
    resources: ["deployments", "deployments/scale", "replicasets", "statefulsets", "statefulsets/scale"],
    verbs: WRITE,
  },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: WRITE },
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: WRITE },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: WRITE },
];

const ROLES: Record<string, Rule[]> = {
  "cluster-admin": [
    { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
    { nonResourceURLs: ["*"], verbs: ["*"] },
  ],
  "system:discovery": [
    {
      nonResourceURLs: [
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/openapi",
        "/openapi/*",
        "/version",
        "/version/",
        "/healthz",
        "/livez",
        "/readyz",
      ],
      verbs: ["get"],
    },
  ],
  "system:basic-user": [
    {
      apiGroups: ["authorization.k8s.io"],
      resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
      verbs: ["create"],
    },
    { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] },
  ],
  "system:public-info-viewer": [
    { nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"], verbs: ["get"] },
  ],
  view: NAMESPACED_READ,
  edit: [...NAMESPACED_READ, ...NAMESPACED_WRITE],
  admin: [
    ...NAMESPACED_READ,
    ...NAMESPACED_WRITE,
    { apiGroups: [RBAC], resources: ["roles", "rolebindings"], verbs: [...READ, ...WRITE] },
  ],
};

const BINDINGS: Record<string, string[]> = {
  "cluster-admin": ["system:masters"],
  "system:discovery": ["system:authenticated"],
  "system:basic-user": ["system:authenticated"],
  "system:public-info-viewer": ["system:authenticated", "system:unauthenticated"],
};

export function bootstrapRbac(api: ClusterApi): void {
  const options = { fieldManager: "tessera-devcluster" };
  for (const [name, rules] of Object.entries(ROLES)) {
    if (api.store.get(`clusterroles.${RBAC}`, "", name)) continue;
    api.create(
      CLUSTER_ROLES,
      "",
      { apiVersion: `${RBAC}/v1`, kind: "ClusterRole", metadata: { name, labels: LABELS }, rules },
      options,
    );
  }
  for (const [name, groups] of Object.entries(BINDINGS)) {
    if (api.store.get(`clusterrolebindings.${RBAC}`, "", name)) continue;
    api.create(
      CLUSTER_ROLE_BINDINGS,
      "",
      {
        apiVersion: `${RBAC}/v1`,
        kind: "ClusterRoleBinding",
        metadata: { name, labels: LABELS },
        roleRef: { apiGroup: RBAC, kind: "ClusterRole", name },
        subjects: groups.map((g) => ({ apiGroup: RBAC, kind: "Group", name: g })),
      },
      options,
    );
  }
}

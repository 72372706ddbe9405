// The objects every cluster starts with: the system namespaces and the `kubernetes` service.
import type { ClusterApi } from "./cluster/cluster-api.ts";

const NAMESPACES = { group: "", version: "v1", resource: "namespaces" };
const SERVICES = { group: "", version: "v1", resource: "services" };
const SYSTEM = ["default", "kube-system", "kube-public", "kube-node-lease"];

export function bootstrapCluster(api: ClusterApi): void {
  const options = { fieldManager: "tessera-devcluster" };
  for (const name of SYSTEM) {
    if (!api.store.get("namespaces", "", name))
      api.create(NAMESPACES, "", { apiVersion: "v1", kind: "Namespace", metadata: { name } }, options);
  }
  if (!api.store.get("services", "default", "kubernetes")) {
    api.create(
      SERVICES,
      "default",
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "kubernetes", labels: { component: "apiserver", provider: "kubernetes" } },
        spec: {
          clusterIP: "10.96.0.1",
          ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: 6443 }],
        },
      },
      options,
    );
  }
}

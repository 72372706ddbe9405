// An in-process cluster for specs: store, registry, manual clock, API with its controllers.

import { ManualClock } from "../../../../services/kernel/manual-clock.ts";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { bootstrapCluster } from "../bootstrap.ts";
import { ResourceRegistry } from "../resources/registry.ts";
import { ObjectStore } from "../store/object-store.ts";
import type { ResourceRef } from "./api-types.ts";
import { ClusterApi } from "./cluster-api.ts";
import { GarbageCollector } from "./garbage-collector.ts";
import { NamespaceController } from "./namespace-controller.ts";

export const CONFIGMAPS: ResourceRef = { group: "", version: "v1", resource: "configmaps" };
export const DEPLOYMENTS: ResourceRef = { group: "apps", version: "v1", resource: "deployments" };
export const PODS: ResourceRef = { group: "", version: "v1", resource: "pods" };
export const NAMESPACES: ResourceRef = { group: "", version: "v1", resource: "namespaces" };
export const CRDS: ResourceRef = {
  group: "apiextensions.k8s.io",
  version: "v1",
  resource: "customresourcedefinitions",
};

export function testCluster(
  options: { eventWindow?: number; gracefulPodDeletion?: boolean; controllers?: boolean } = {},
) {
  const clock = new ManualClock();
  const store = new ObjectStore({ eventWindow: options.eventWindow ?? 1000 });
  const api = new ClusterApi({
    store,
    registry: new ResourceRegistry(),
    clock,
    gracefulPodDeletion: options.gracefulPodDeletion ?? false,
  });
  bootstrapCluster(api);
  const gc = new GarbageCollector(api);
  const namespaces = new NamespaceController(api);
  if (options.controllers) {
    gc.start();
    namespaces.start();
  }
  const settle = async () => {
    do {
      await Promise.all([gc.idle(), namespaces.idle()]);
      await new Promise((resolve) => setImmediate(resolve));
    } while (gc.busy || namespaces.busy);
  };
  return { clock, store, api, gc, namespaces, settle };
}

export const configMap = (
  name: string,
  meta: Partial<KubeObject["metadata"]> = {},
  data: Record<string, string> = {},
): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...meta },
  data,
});

export const deployment = (name: string, replicas = 1): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "i" }] } },
  },
});

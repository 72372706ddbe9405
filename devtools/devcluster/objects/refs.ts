// The resources the kubelet and the built-in controllers read and write, as ResourceRefs.
import type { ResourceRef } from "../apiserver/cluster/api-types.ts";

const core = (resource: string): ResourceRef => ({ group: "", version: "v1", resource });
const apps = (resource: string): ResourceRef => ({ group: "apps", version: "v1", resource });

export const PODS = core("pods");
export const NODES = core("nodes");
export const SERVICES = core("services");
export const CONFIGMAPS = core("configmaps");
export const SECRETS = core("secrets");
export const NAMESPACES = core("namespaces");
export const SERVICEACCOUNTS = core("serviceaccounts");
export const EVENTS = core("events");
export const DEPLOYMENTS = apps("deployments");
export const REPLICASETS = apps("replicasets");
export const STATEFULSETS = apps("statefulsets");
export const ENDPOINTSLICES: ResourceRef = {
  group: "discovery.k8s.io",
  version: "v1",
  resource: "endpointslices",
};

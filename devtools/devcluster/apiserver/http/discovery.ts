// Discovery documents: /version, /api, /apis, per-group and per-group-version resource lists, and
// the aggregated form (apidiscovery.k8s.io/v2) that kubectl asks for first.
import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import { compareVersions, type ResourceRegistry } from "../resources/registry.ts";
import { ALL_VERBS, type ResourceType } from "../resources/resource-type.ts";

export const AGGREGATED_DISCOVERY_TYPE =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
export const KUBERNETES_VERSION = { major: "1", minor: "35", gitVersion: "v1.35.0" };

export function versionInfo(): JsonObject {
  return {
    ...KUBERNETES_VERSION,
    gitCommit: "tessera-devcluster",
    gitTreeState: "clean",
    buildDate: "2025-01-01T00:00:00Z",
    goVersion: "go1.24",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

interface Subresource {
  name: string;
  kind: string;
  group?: string;
  version?: string;
  verbs: string[];
}

function subresourcesOf(type: ResourceType): Subresource[] {
  const subs: Subresource[] = [];
  if (type.subresources.status)
    subs.push({ name: "status", kind: type.kind, verbs: ["get", "patch", "update"] });
  if (type.subresources.scale)
    subs.push({
      name: "scale",
      kind: "Scale",
      group: "autoscaling",
      version: "v1",
      verbs: ["get", "patch", "update"],
    });
  if (type.group === "" && type.plural === "pods") subs.push({ name: "log", kind: "Pod", verbs: ["get"] });
  if (type.group === "" && type.plural === "namespaces")
    subs.push({ name: "finalize", kind: "Namespace", verbs: ["update"] });
  return subs;
}

function sortedTypes(types: ResourceType[]): ResourceType[] {
  return [...types].sort((a, b) => a.plural.localeCompare(b.plural));
}

export function apiResourceList(
  registry: ResourceRegistry,
  group: string,
  version: string,
): JsonObject | undefined {
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return undefined;
  const resources: JsonObject[] = [];
  for (const type of sortedTypes(types)) {
    resources.push({
      name: type.plural,
      singularName: type.singular,
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: ALL_VERBS,
      ...(type.shortNames.length > 0 ? { shortNames: type.shortNames } : {}),
      ...(type.categories.length > 0 ? { categories: type.categories } : {}),
    });
    for (const sub of subresourcesOf(type)) {
      resources.push({
        name: `${type.plural}/${sub.name}`,
        singularName: "",
        namespaced: type.namespaced,
        ...(sub.group !== undefined ? { group: sub.group, version: sub.version ?? "" } : {}),
        kind: sub.kind,
        verbs: sub.verbs,
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources,
  };
}

export function apiVersions(host: string): JsonObject {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: host }],
  };
}

function groupVersions(group: string, versions: string[]): JsonObject {
  const sorted = [...versions].sort(compareVersions);
  const entries = sorted.map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions: entries, preferredVersion: entries[0] ?? {} };
}

export function apiGroup(registry: ResourceRegistry, group: string): JsonObject | undefined {
  const found = registry.groupVersions().find((g) => g.group === group);
  return found && group !== ""
    ? { kind: "APIGroup", apiVersion: "v1", ...groupVersions(group, found.versions) }
    : undefined;
}

export function apiGroupList(registry: ResourceRegistry): JsonObject {
  const groups = registry.groupVersions().filter((g) => g.group !== "");
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: groups.map((g) => groupVersions(g.group, g.versions)),
  };
}

function discoveryResource(type: ResourceType): JsonObject {
  return {
    resource: type.plural,
    responseKind: { group: type.group, version: type.version, kind: type.kind },
    scope: type.namespaced ? "Namespaced" : "Cluster",
    singularResource: type.singular,
    verbs: ALL_VERBS,
    ...(type.shortNames.length > 0 ? { shortNames: type.shortNames } : {}),
    ...(type.categories.length > 0 ? { categories: type.categories } : {}),
    subresources: subresourcesOf(type).map((sub) => ({
      subresource: sub.name,
      responseKind: { group: sub.group ?? type.group, version: sub.version ?? type.version, kind: sub.kind },
      verbs: sub.verbs,
    })),
  };
}

/** The aggregated discovery document: /api (core only) or /apis (every other group). */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean): JsonObject {
  const items = registry
    .groupVersions()
    .filter((g) => (g.group === "") === core)
    .map((g) => ({
      metadata: { name: g.group, creationTimestamp: null },
      versions: g.versions.map((version) => ({
        version,
        resources: sortedTypes(registry.inGroupVersion(g.group, version)).map(discoveryResource),
        freshness: "Current",
      })),
    }));
  return { kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2", metadata: {}, items };
}

export function wantsAggregatedDiscovery(accept: string | undefined): boolean {
  return (accept ?? "")
    .split(",")
    .some((part) => /as=APIGroupDiscoveryList/.test(part) && /v=v2(;|$|\s)/.test(part.replace(/\s/g, "")));
}

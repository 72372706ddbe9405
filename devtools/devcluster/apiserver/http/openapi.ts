// /openapi/v3: an index of group-versions and one OpenAPI document per group-version. kubectl
// and helm need it to exist; a PATCH operation per kind that carries x-kubernetes-group-version-kind
// and a fieldValidation query parameter makes them send fieldValidation=Strict and leave validation
// to this server. PATCH bodies deliberately omit strategic-merge-patch, so kubectl computes its
// client-side apply patches from its compiled-in types rather than from these schemas.
import { createHash } from "node:crypto";
import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import type { ResourceRegistry } from "../resources/registry.ts";
import type { ResourceType } from "../resources/resource-type.ts";

const QUERY = (name: string, description: string, type = "string") => ({
  name,
  in: "query",
  description,
  schema: { type, uniqueItems: true },
});
const WRITE_PARAMS = [
  QUERY("dryRun", "When present, indicates that modifications should not be persisted."),
  QUERY(
    "fieldManager",
    "fieldManager is a name associated with the actor or entity that is making these changes.",
  ),
  QUERY(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.",
  ),
];

function schemaName(type: ResourceType): string {
  const group = type.group === "" ? "core" : type.group;
  return `${group.split(".").reverse().join(".")}.${type.version}.${type.kind}`;
}

function basePath(type: ResourceType): string {
  const root = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  return type.namespaced ? `${root}/namespaces/{namespace}/${type.plural}` : `${root}/${type.plural}`;
}

function operations(type: ResourceType, ref: JsonObject, subresource: string | undefined): JsonObject {
  const gvk = { group: type.group, version: type.version, kind: type.kind };
  const body = { content: { "application/json": { schema: ref } } };
  const response = { "200": { description: "OK", content: { "application/json": { schema: ref } } } };
  const suffix = `${type.kind}${subresource ? subresource[0]!.toUpperCase() + subresource.slice(1) : ""}`;
  const op = (action: string, extra: JsonObject) => ({
    operationId: `${action}${suffix}`,
    responses: response,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
    ...extra,
  });
  return {
    get: op("get", {}),
    put: op("put", { parameters: WRITE_PARAMS, requestBody: body }),
    patch: op("patch", {
      parameters: [...WRITE_PARAMS, QUERY("force", "Force is going to force Apply requests.", "boolean")],
      requestBody: {
        content: {
          "application/json-patch+json": { schema: { type: "object" } },
          "application/merge-patch+json": { schema: { type: "object" } },
          "application/apply-patch+yaml": { schema: { type: "object" } },
        },
      },
    }),
    ...(subresource ? {} : { delete: op("delete", {}) }),
  };
}

function pathsOf(type: ResourceType): JsonObject {
  const ref = { $ref: `#/components/schemas/${schemaName(type)}` };
  const gvk = { group: type.group, version: type.version, kind: type.kind };
  const base = basePath(type);
  const paths: JsonObject = {
    [base]: {
      get: {
        operationId: `list${type.kind}`,
        responses: { "200": { description: "OK" } },
        "x-kubernetes-action": "list",
        "x-kubernetes-group-version-kind": gvk,
      },
      post: {
        operationId: `create${type.kind}`,
        parameters: WRITE_PARAMS,
        requestBody: { content: { "application/json": { schema: ref } } },
        responses: { "201": { description: "Created" } },
        "x-kubernetes-action": "post",
        "x-kubernetes-group-version-kind": gvk,
      },
    },
    [`${base}/{name}`]: operations(type, ref, undefined),
  };
  if (type.subresources.status) paths[`${base}/{name}/status`] = operations(type, ref, "status");
  return paths;
}

function componentSchema(type: ResourceType): JsonObject {
  const gvk = [{ group: type.group, version: type.version, kind: type.kind }];
  const base = type.schema
    ? (structuredClone(type.schema) as JsonObject)
    : { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  const properties = (base["properties"] ?? {}) as JsonObject;
  return {
    ...base,
    type: "object",
    properties: {
      ...properties,
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    },
    "x-kubernetes-group-version-kind": gvk,
  };
}

export function openApiDocument(
  registry: ResourceRegistry,
  group: string,
  version: string,
): JsonObject | undefined {
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return undefined;
  const paths: JsonObject = {};
  const schemas: JsonObject = {};
  for (const type of types) {
    Object.assign(paths, pathsOf(type));
    schemas[schemaName(type)] = componentSchema(type);
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.35.0" },
    paths,
    components: { schemas },
  };
}

export function openApiIndex(registry: ResourceRegistry): JsonObject {
  const paths: JsonObject = {};
  for (const { group, versions } of registry.groupVersions()) {
    for (const version of versions) {
      const key = group === "" ? `api/${version}` : `apis/${group}/${version}`;
      const hash = createHash("sha256")
        .update(JSON.stringify(openApiDocument(registry, group, version)))
        .digest("hex")
        .slice(0, 32)
        .toUpperCase();
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
    }
  }
  return { paths };
}

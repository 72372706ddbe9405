// Server-side printing: `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` turns objects into
// a Table of the resource's printer columns, which kubectl prints as-is. Also serves the
// PartialObjectMetadata forms metadata-only clients ask for.
import type { JsonObject, JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import type { ResourceType } from "../resources/resource-type.ts";

export type Rendering =
  | { kind: "object" }
  | { kind: "table"; version: string }
  | { kind: "metadata"; version: string };

/** Picks the rendering from the Accept header (first acceptable entry wins). */
export function negotiateRendering(accept: string | undefined): Rendering {
  for (const entry of (accept ?? "").split(",")) {
    const params = new Map(
      entry
        .split(";")
        .slice(1)
        .map((p) => p.trim().split("=") as [string, string]),
    );
    const as = params.get("as");
    if (!as) return { kind: "object" };
    if (params.get("g") !== "meta.k8s.io") continue;
    const version = params.get("v") ?? "v1";
    if (as === "Table") return { kind: "table", version };
    if (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList")
      return { kind: "metadata", version };
  }
  return { kind: "object" };
}

function partialMetadata(object: KubeObject, version: string): JsonObject {
  return {
    kind: "PartialObjectMetadata",
    apiVersion: `meta.k8s.io/${version}`,
    metadata: object.metadata as JsonObject,
  };
}

export type IncludeObject = "None" | "Metadata" | "Object";

function columnDefinitions(type: ResourceType): JsonObject[] {
  return [
    {
      name: "Name",
      type: "string",
      format: "name",
      description: "Name must be unique within a namespace.",
      priority: 0,
    },
    ...type.printerColumns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: c.description ?? "",
      priority: c.priority,
    })),
  ];
}

function row(
  type: ResourceType,
  object: KubeObject,
  now: number,
  include: IncludeObject,
  version: string,
): JsonObject {
  const cells: JsonValue[] = [
    object.metadata.name ?? "",
    ...type.printerColumns.map((c) => c.cell(object, now)),
  ];
  const embedded =
    include === "None"
      ? undefined
      : include === "Object"
        ? (object as unknown as JsonObject)
        : partialMetadata(object, version);
  return { cells, ...(embedded ? { object: embedded } : {}) };
}

export function toTable(
  type: ResourceType,
  objects: KubeObject[],
  options: {
    now: number;
    version: string;
    include: IncludeObject;
    resourceVersion?: string;
    continue?: string;
    headers?: boolean;
  },
): JsonObject {
  return {
    kind: "Table",
    apiVersion: `meta.k8s.io/${options.version}`,
    metadata: {
      ...(options.resourceVersion ? { resourceVersion: options.resourceVersion } : {}),
      ...(options.continue ? { continue: options.continue } : {}),
    },
    columnDefinitions: options.headers === false ? [] : columnDefinitions(type),
    rows: objects.map((o) => row(type, o, options.now, options.include, options.version)),
  };
}

export function toMetadataList(objects: KubeObject[], version: string, resourceVersion: string): JsonObject {
  return {
    kind: "PartialObjectMetadataList",
    apiVersion: `meta.k8s.io/${version}`,
    metadata: { resourceVersion },
    items: objects.map((o) => partialMetadata(o, version)),
  };
}

export function toMetadata(object: KubeObject, version: string): JsonObject {
  return partialMetadata(object, version);
}

// CustomResourceDefinition -> the resource types it serves (one per served version), with merge
// metadata and table columns derived from its schema.

import type { JsonObject, JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import { type FieldError, fieldError } from "../core/field-errors.ts";
import { isJsonObject } from "../core/json-object.ts";
import { compileErrors } from "../schema/cel-rules.ts";
import type { StructuralSchema } from "../schema/structural-schema.ts";
import { column } from "./define-kind.ts";
import { jsonPathValue } from "./json-path.ts";
import { listAt, objectAt, stringAt } from "./object-fields.ts";
import {
  ageColumn,
  humanDuration,
  type PrinterColumn,
  type ResourceType,
  type ScaleSubresource,
} from "./resource-type.ts";
import { objectMetaInfo, type TypeInfo } from "./type-info.ts";

/** Merge metadata from a structural schema's x-kubernetes-list-type / map-type extensions. */
export function typeInfoOfSchema(schema: StructuralSchema | undefined): TypeInfo {
  if (!schema) return {};
  const info: TypeInfo = {};
  if (schema.properties) {
    info.fields = Object.fromEntries(
      Object.entries(schema.properties).map(([k, v]) => [k, typeInfoOfSchema(v)]),
    );
  }
  if (schema.items) info.elements = typeInfoOfSchema(schema.items);
  else if (typeof schema.additionalProperties === "object")
    info.elements = typeInfoOfSchema(schema.additionalProperties);
  if (schema.type === "array") {
    const listType = schema["x-kubernetes-list-type"] ?? "atomic";
    const keys = schema["x-kubernetes-list-map-keys"] ?? [];
    const keyDefaults: Record<string, string | number> = {};
    for (const key of keys) {
      const value = schema.items?.properties?.[key]?.default;
      if (typeof value === "string" || typeof value === "number") keyDefaults[key] = value;
    }
    info.list = listType === "map" ? { type: "map", keys, keyDefaults } : { type: listType };
  }
  if (schema["x-kubernetes-map-type"] === "atomic") info.atomic = true;
  return info;
}

function printerColumn(spec: JsonObject): PrinterColumn {
  const type = (stringAt(spec, "type") ?? "string") as PrinterColumn["type"];
  const path = stringAt(spec, "jsonPath") ?? "";
  return {
    ...column(stringAt(spec, "name") ?? "", (object, now) => {
      const value = jsonPathValue(object as unknown as JsonValue, path);
      if (value === undefined) return "<none>" as JsonValue;
      if (type === "date" && typeof value === "string" && !Number.isNaN(Date.parse(value)))
        return humanDuration(now - Date.parse(value));
      return isJsonObject(value) || Array.isArray(value) ? JSON.stringify(value) : value;
    }),
    type,
    priority: typeof spec["priority"] === "number" ? spec["priority"] : 0,
    ...(stringAt(spec, "description") ? { description: stringAt(spec, "description")! } : {}),
    ...(stringAt(spec, "format") ? { format: stringAt(spec, "format")! } : {}),
  };
}

export function resourceTypesOfCrd(crd: KubeObject): ResourceType[] {
  const spec = objectAt(crd, "spec") ?? {};
  const names = objectAt(spec, "names") ?? {};
  const group = stringAt(spec, "group") ?? "";
  const kind = stringAt(names, "kind") ?? "";
  const plural = stringAt(names, "plural") ?? "";
  const versions = listAt(spec, "versions").filter(isJsonObject);
  const storage = versions.find((v) => v["storage"] === true);
  return versions
    .filter((v) => v["served"] !== false)
    .map((v) => {
      const schema = (objectAt(v, "schema", "openAPIV3Schema") ?? {}) as StructuralSchema;
      const scale = objectAt(v, "subresources", "scale") as ScaleSubresource | undefined;
      const columns = listAt(v, "additionalPrinterColumns").filter(isJsonObject).map(printerColumn);
      const typeInfo = typeInfoOfSchema(schema);
      return {
        group,
        version: stringAt(v, "name") ?? "",
        kind,
        listKind: stringAt(names, "listKind") ?? `${kind}List`,
        plural,
        singular: stringAt(names, "singular") ?? kind.toLowerCase(),
        namespaced: stringAt(spec, "scope") !== "Cluster",
        shortNames: listAt(names, "shortNames").map(String),
        categories: listAt(names, "categories").map(String),
        subresources: {
          status: objectAt(v, "subresources", "status") !== undefined,
          ...(scale ? { scale } : {}),
        },
        printerColumns: columns.length > 0 ? columns : [ageColumn],
        typeInfo: { fields: { ...typeInfo.fields, metadata: objectMetaInfo } },
        nameRule: "subdomain",
        storageVersion: stringAt(storage, "name") ?? stringAt(v, "name") ?? "",
        schema,
        crdName: crd.metadata.name ?? "",
      } satisfies ResourceType;
    });
}

export function validateCrd(crd: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = objectAt(crd, "spec") ?? {};
  const group = stringAt(spec, "group");
  const plural = stringAt(spec, "names", "plural");
  if (!group) errors.push(fieldError.required("spec.group"));
  if (!plural) errors.push(fieldError.required("spec.names.plural"));
  if (!stringAt(spec, "names", "kind")) errors.push(fieldError.required("spec.names.kind"));
  if (group && plural && crd.metadata.name !== `${plural}.${group}`) {
    errors.push(
      fieldError.invalid("metadata.name", crd.metadata.name, `must be spec.names.plural+"."+spec.group`),
    );
  }
  const scope = stringAt(spec, "scope");
  if (scope !== "Namespaced" && scope !== "Cluster")
    errors.push(fieldError.notSupported("spec.scope", scope ?? "", ["Cluster", "Namespaced"]));
  const versions = listAt(spec, "versions").filter(isJsonObject);
  if (versions.length === 0)
    errors.push(
      fieldError.required("spec.versions", "must have exactly one version marked as storage version"),
    );
  if (versions.filter((v) => v["storage"] === true).length !== 1) {
    errors.push(
      fieldError.invalid(
        "spec.versions",
        versions.length,
        "must have exactly one version marked as storage version",
      ),
    );
  }
  versions.forEach((v, i) => {
    const schema = objectAt(v, "schema", "openAPIV3Schema");
    if (!schema)
      errors.push(fieldError.required(`spec.versions[${i}].schema.openAPIV3Schema`, "schemas are required"));
    else
      errors.push(...compileErrors(schema as StructuralSchema, `spec.versions[${i}].schema.openAPIV3Schema`));
  });
  return errors;
}

/** The status the CRD controller would write: names accepted, established, stored versions. */
export function establishedStatus(crd: KubeObject, now: string): JsonObject {
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: "True",
    lastTransitionTime: now,
    reason,
    message,
  });
  const storage = listAt(crd, "spec", "versions")
    .filter(isJsonObject)
    .find((v) => v["storage"] === true);
  const previous = listAt(crd, "status", "storedVersions").map(String);
  const stored = stringAt(storage, "name");
  return {
    acceptedNames: objectAt(crd, "spec", "names") ?? {},
    conditions: [
      condition("NamesAccepted", "NoConflicts", "no conflicts found"),
      condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
    ],
    storedVersions: stored && !previous.includes(stored) ? [...previous, stored] : previous,
  };
}

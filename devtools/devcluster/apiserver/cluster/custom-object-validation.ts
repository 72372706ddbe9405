// Custom objects go through the CRD's schema: prune unknown fields (or reject them under strict
// field validation), apply defaults, then validate types, bounds and CEL rules.

import type { JsonObject, JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import { apiErrors } from "../core/api-status.ts";
import type { FieldError } from "../core/field-errors.ts";
import type { ResourceType } from "../resources/resource-type.ts";
import { checkCelRules } from "../schema/cel-rules.ts";
import { applyDefaults } from "../schema/defaulting.ts";
import { pruneObject } from "../schema/prune.ts";
import { validateValue } from "../schema/schema-validation.ts";

export type FieldValidation = "Strict" | "Warn" | "Ignore";

/** Prunes and defaults in place; returns warnings for pruned fields (Warn) or throws (Strict). */
export function pruneAndDefault(
  type: ResourceType,
  object: KubeObject,
  fieldValidation: FieldValidation,
): string[] {
  if (!type.schema) return [];
  const removed = pruneObject(object as unknown as JsonObject, type.schema);
  if (removed.length > 0 && fieldValidation === "Strict") {
    const unknown = removed.map((path) => `unknown field "${path}"`).join(", ");
    throw apiErrors.badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown}`,
    );
  }
  applyDefaults(object as unknown as JsonValue, type.schema);
  return fieldValidation === "Warn" ? removed.map((path) => `unknown field "${path}"`) : [];
}

function rootMetadata(object: KubeObject): JsonObject {
  const meta: JsonObject = {};
  if (object.metadata.name !== undefined) meta["name"] = object.metadata.name;
  if (object.metadata.generateName !== undefined) meta["generateName"] = object.metadata.generateName;
  return meta;
}

export function validateCustomObject(
  type: ResourceType,
  object: KubeObject,
  old: KubeObject | undefined,
): FieldError[] {
  const schema = type.schema;
  if (!schema) return [];
  const errors: FieldError[] = [];
  const root = object as unknown as JsonObject;
  for (const [key, childSchema] of Object.entries(schema.properties ?? {})) {
    if (key === "metadata" || key === "apiVersion" || key === "kind") continue;
    const value = root[key];
    if (value !== undefined) errors.push(...validateValue(value, childSchema, key));
  }
  for (const key of schema.required ?? []) {
    if (root[key] === undefined) errors.push({ type: "Required", field: key });
  }
  if (errors.length > 0) return errors;
  const withoutMeta = {
    ...schema,
    properties: Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => k !== "metadata")),
  };
  const celSelf = (o: KubeObject) => {
    // The root `self` sees apiVersion, kind, metadata.name/generateName and the schema's fields.
    const view: JsonObject = { apiVersion: o.apiVersion, kind: o.kind, metadata: rootMetadata(o) };
    for (const key of Object.keys(withoutMeta.properties)) {
      const value = (o as unknown as JsonObject)[key];
      if (value !== undefined) view[key] = value;
    }
    return view;
  };
  for (const error of checkCelRules(celSelf(object), old ? celSelf(old) : undefined, withoutMeta, "")) {
    errors.push({ ...error, field: error.field === "" ? "<nil>" : error.field });
  }
  return errors;
}

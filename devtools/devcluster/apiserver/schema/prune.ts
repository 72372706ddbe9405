// Pruning: fields a structural schema does not declare are dropped (unless the schema preserves
// unknown fields), and their paths are reported so strict field validation can reject them.
import type { JsonObject, JsonValue } from "../../../../services/kube/kube-object.ts";
import { isJsonObject } from "../core/json-object.ts";
import { keepsUnknownFields, propertySchema, type StructuralSchema } from "./structural-schema.ts";

const ROOT_FIELDS = new Set(["apiVersion", "kind", "metadata"]);

/** Prunes a whole custom object in place; returns the paths of the fields removed. */
export function pruneObject(object: JsonObject, schema: StructuralSchema): string[] {
  const removed: string[] = [];
  for (const key of Object.keys(object)) {
    if (ROOT_FIELDS.has(key)) continue;
    const child = schema.properties?.[key];
    if (!child && !keepsUnknownFields(schema)) {
      delete object[key];
      removed.push(key);
    } else if (child) {
      pruneValue(object[key], child, key, removed);
    }
  }
  return removed;
}

function pruneValue(
  value: JsonValue | undefined,
  schema: StructuralSchema,
  path: string,
  removed: string[],
): void {
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items) value.forEach((item, i) => void pruneValue(item, items, `${path}[${i}]`, removed));
    return;
  }
  if (!isJsonObject(value)) return;
  if (schema["x-kubernetes-embedded-resource"]) {
    // Embedded objects keep apiVersion/kind/metadata like a root object.
    for (const key of Object.keys(value)) {
      if (ROOT_FIELDS.has(key)) continue;
      pruneKey(value, key, schema, path, removed);
    }
    return;
  }
  for (const key of Object.keys(value)) pruneKey(value, key, schema, path, removed);
}

function pruneKey(
  value: JsonObject,
  key: string,
  schema: StructuralSchema,
  path: string,
  removed: string[],
): void {
  const child = propertySchema(schema, key);
  if (child) {
    pruneValue(value[key], child, `${path}.${key}`, removed);
    return;
  }
  if (keepsUnknownFields(schema)) return;
  delete value[key];
  removed.push(`${path}.${key}`);
}

// Defaulting: absent properties that declare a default get it, depth first, as the API server
// does after pruning (so a default can itself be pruned-safe and validated).
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { cloneObject, isJsonObject } from "../core/json-object.ts";
import { propertySchema, type StructuralSchema } from "./structural-schema.ts";

export function applyDefaults(value: JsonValue | undefined, schema: StructuralSchema): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const item of value) applyDefaults(item, schema.items);
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (value[key] === undefined && child.default !== undefined) value[key] = cloneObject(child.default);
  }
  for (const key of Object.keys(value)) {
    const child = propertySchema(schema, key);
    if (child) applyDefaults(value[key], child);
  }
}

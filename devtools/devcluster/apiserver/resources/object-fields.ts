// Small typed readers over untyped objects, for columns, defaults and validation.
import type { JsonObject, JsonValue } from "../../../../services/kube/kube-object.ts";
import { getPath, isJsonObject } from "../core/json-object.ts";

export function objectAt(root: unknown, ...path: string[]): JsonObject | undefined {
  const value = getPath(root, path);
  return isJsonObject(value) ? value : undefined;
}

export function listAt(root: unknown, ...path: string[]): JsonValue[] {
  const value = getPath(root, path);
  return Array.isArray(value) ? value : [];
}

export function stringAt(root: unknown, ...path: string[]): string | undefined {
  const value = getPath(root, path);
  return typeof value === "string" ? value : undefined;
}

export function numberAt(root: unknown, ...path: string[]): number | undefined {
  const value = getPath(root, path);
  return typeof value === "number" ? value : undefined;
}

/** Ensures an object exists at path and returns it. */
export function ensureObject(root: JsonObject, ...path: string[]): JsonObject {
  let node = root;
  for (const key of path) {
    const next = node[key];
    if (isJsonObject(next)) node = next;
    else {
      const created: JsonObject = {};
      node[key] = created;
      node = created;
    }
  }
  return node;
}

export function setDefault(target: JsonObject, key: string, value: JsonValue): void {
  if (target[key] === undefined) target[key] = value;
}

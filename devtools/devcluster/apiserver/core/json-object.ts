// Helpers over Kubernetes objects as plain JSON (their types are services/kube/kube-object.ts):
// structural equality, cloning, reading and writing nested paths, apiVersion strings.
import type { JsonObject, JsonValue } from "../../../../services/kube/kube-object.ts";

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function cloneObject<T>(value: T): T {
  return structuredClone(value);
}

/** Structural equality of JSON values (key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

/** `apps/v1` -> { group: "apps", version: "v1" }; `v1` -> core group. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf("/");
  if (slash < 0) return { group: "", version: apiVersion };
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function formatApiVersion(group: string, version: string): string {
  return group === "" ? version : `${group}/${version}`;
}

/** Reads a nested value by path segments; undefined when any step is missing. */
export function getPath(root: unknown, path: readonly string[]): unknown {
  let node: unknown = root;
  for (const segment of path) {
    if (!isJsonObject(node)) return undefined;
    node = node[segment];
  }
  return node;
}

/** Writes a nested value, creating intermediate objects. */
export function setPath(root: JsonObject, path: readonly string[], value: JsonValue | undefined): void {
  let node: JsonObject = root;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (isJsonObject(next)) node = next;
    else {
      const created: JsonObject = {};
      node[segment] = created;
      node = created;
    }
  }
  const last = path[path.length - 1];
  if (last === undefined) return;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

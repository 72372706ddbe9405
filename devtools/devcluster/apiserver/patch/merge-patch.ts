// JSON merge patch (RFC 7386): objects merge key by key, null deletes, anything else replaces.
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { cloneObject, isJsonObject } from "../core/json-object.ts";

export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return cloneObject(patch);
  const result = isJsonObject(target) ? cloneObject(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

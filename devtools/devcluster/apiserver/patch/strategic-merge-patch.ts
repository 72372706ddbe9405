// Strategic merge patch, as kubectl (client-side apply) and helm 3 send for built-in kinds: maps
// merge, lists of objects merge by their key (containers by name), primitive sets union, and the
// directives $patch (replace/delete/merge), $retainKeys, $setElementOrder/<list> and
// $deleteFromPrimitiveList/<list> are honoured. Kinds without type info fall back to replacement.

import type { JsonObject, JsonValue } from "../../../../services/kube/kube-object.ts";
import { apiErrors } from "../core/api-status.ts";
import { cloneObject, isJsonObject, jsonEqual } from "../core/json-object.ts";
import { fieldInfo, type TypeInfo } from "../resources/type-info.ts";

const ORDER = "$setElementOrder/";
const DELETE_FROM = "$deleteFromPrimitiveList/";

export function applyStrategicMergePatch(
  target: JsonValue,
  patch: JsonValue,
  info: TypeInfo | undefined,
): JsonValue {
  if (!isJsonObject(patch)) throw apiErrors.badRequest("strategic merge patch must be an object");
  return mergeMap(isJsonObject(target) ? target : {}, patch, info) ?? {};
}

function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  info: TypeInfo | undefined,
): JsonObject | undefined {
  const directive = patch["$patch"];
  if (directive === "delete") return undefined;
  if (directive === "replace") return stripDirectives(patch);
  const result = cloneObject(original);
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || key === "$patch" || key === "$retainKeys") continue;
    if (key.startsWith(ORDER)) continue;
    if (key.startsWith(DELETE_FROM)) {
      const field = key.slice(DELETE_FROM.length);
      const list = result[field];
      if (Array.isArray(list) && Array.isArray(value))
        result[field] = list.filter((v) => !value.some((d) => jsonEqual(d, v)));
      continue;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    result[key] = mergeValue(result[key], value, fieldInfo(info, key));
    if (result[key] === undefined) delete result[key];
  }
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(ORDER) || !Array.isArray(order)) continue;
    const field = key.slice(ORDER.length);
    const list = result[field];
    if (Array.isArray(list)) result[field] = reorder(list, order, mergeKeyOf(fieldInfo(info, field)));
  }
  const retain = patch["$retainKeys"];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  return result;
}

function mergeValue(
  original: JsonValue | undefined,
  patch: JsonValue,
  info: TypeInfo | undefined,
): JsonValue | undefined {
  if (isJsonObject(patch)) {
    if (info?.atomic) return stripDirectives(patch);
    return mergeMap(isJsonObject(original) ? original : {}, patch, info);
  }
  if (Array.isArray(patch)) return mergeList(Array.isArray(original) ? original : [], patch, info);
  return cloneObject(patch);
}

function mergeKeyOf(info: TypeInfo | undefined): string | undefined {
  return info?.list?.type === "map" ? info.list.keys[0] : undefined;
}

function mergeList(original: JsonValue[], patch: JsonValue[], info: TypeInfo | undefined): JsonValue[] {
  if (patch.some((item) => isJsonObject(item) && item["$patch"] === "replace")) {
    return patch.filter((item) => !(isJsonObject(item) && item["$patch"] === "replace")).map(stripDirectives);
  }
  const key = mergeKeyOf(info);
  if (key !== undefined) return mergeObjectList(original, patch, key, info?.elements);
  if (info?.list?.type === "set") {
    const result = cloneObject(original);
    for (const item of patch)
      if (!result.some((existing) => jsonEqual(existing, item))) result.push(cloneObject(item));
    return result;
  }
  return patch.map(stripDirectives);
}

function mergeObjectList(
  original: JsonValue[],
  patch: JsonValue[],
  key: string,
  elements: TypeInfo | undefined,
): JsonValue[] {
  const result = cloneObject(original);
  for (const item of patch) {
    if (!isJsonObject(item)) continue;
    const index = result.findIndex(
      (existing) => isJsonObject(existing) && jsonEqual(existing[key], item[key]),
    );
    if (item["$patch"] === "delete") {
      if (index >= 0) result.splice(index, 1);
      continue;
    }
    if (index < 0) {
      result.push(stripDirectives(item));
      continue;
    }
    const merged = mergeMap(result[index] as JsonObject, item, elements);
    if (merged) result[index] = merged;
    else result.splice(index, 1);
  }
  return result;
}

/** Orders list items as $setElementOrder says; items it does not name keep their relative order after. */
function reorder(list: JsonValue[], order: JsonValue[], key: string | undefined): JsonValue[] {
  const identity = (item: JsonValue) => (key !== undefined && isJsonObject(item) ? item[key] : item);
  const ordered: JsonValue[] = [];
  const used = new Set<number>();
  for (const wanted of order) {
    const index = list.findIndex((item, i) => !used.has(i) && jsonEqual(identity(item), identity(wanted)));
    if (index >= 0) {
      ordered.push(list[index]!);
      used.add(index);
    }
  }
  return [...ordered, ...list.filter((_, i) => !used.has(i))];
}

function stripDirectives<T extends JsonValue>(value: T): T {
  if (Array.isArray(value)) return value.map(stripDirectives) as T;
  if (!isJsonObject(value)) return value;
  const result: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined || key.startsWith("$")) continue;
    result[key] = stripDirectives(child);
  }
  return result as T;
}

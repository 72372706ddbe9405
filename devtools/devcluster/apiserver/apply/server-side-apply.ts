// Server-side apply: the applied configuration is merged into the live object, fields this
// manager applied before and no longer applies are removed (unless someone else owns them), and a
// field another manager owns with a different value is a conflict unless the apply is forced.

import type { JsonObject, JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import { formatMicroTime } from "../../../../services/kube/kube-time.ts";
import { statusError } from "../core/api-status.ts";
import { cloneObject, isJsonObject, jsonEqual } from "../core/json-object.ts";
import { fieldInfo, type ListType, type TypeInfo } from "../resources/type-info.ts";
import { elementKey, type FieldPath, fieldPaths, formatPath, keyPath, valueAt } from "./field-paths.ts";
import { type Manager, readManagers, sameManager, writeManagers } from "./managed-fields.ts";

export interface ApplyRequest {
  live: KubeObject | undefined;
  applied: KubeObject;
  manager: string;
  force: boolean;
  info: TypeInfo;
  apiVersion: string;
  now: number;
  subresource?: string;
}

interface Conflict {
  manager: Manager;
  key: string;
}

export function serverSideApply(request: ApplyRequest): KubeObject {
  const { live, applied, info } = request;
  const appliedPaths = fieldPaths(applied as unknown as JsonValue, info);
  const managers = live ? readManagers(live) : [];
  const me = {
    manager: request.manager,
    operation: "Apply" as const,
    ...(request.subresource ? { subresource: request.subresource } : {}),
  };
  const mine = managers.find((m) => sameManager(m, me));
  const others = managers.filter((m) => m !== mine);

  const conflicts = live ? findConflicts(live, applied, appliedPaths, others, info) : [];
  if (conflicts.length > 0 && !request.force) throw conflictError(conflicts);
  for (const { manager, key } of conflicts) manager.paths.delete(key);

  const merged = live ? cloneObject(live) : ({} as KubeObject);
  for (const key of mine?.paths ?? []) {
    if (appliedPaths.has(key) || ownedByOthers(key, others)) continue;
    removePath(merged as unknown as JsonObject, keyPath(key), info);
  }
  const result = mergeApplied(
    merged as unknown as JsonValue,
    applied as unknown as JsonValue,
    info,
  ) as KubeObject;

  const entry: Manager = mine ?? { ...me, apiVersion: request.apiVersion, time: "", paths: new Set() };
  entry.paths = appliedPaths;
  entry.apiVersion = request.apiVersion;
  entry.time = formatMicroTime(request.now).replace(/\.\d+Z$/, "Z");
  writeManagers(result, mine ? managers : [...managers, entry]);
  return result;
}

function findConflicts(
  live: KubeObject,
  applied: KubeObject,
  appliedPaths: Set<string>,
  others: Manager[],
  info: TypeInfo,
): Conflict[] {
  const conflicts: Conflict[] = [];
  for (const manager of others) {
    for (const key of appliedPaths) {
      if (!manager.paths.has(key) || key.endsWith(".")) continue;
      const path = keyPath(key);
      const current = valueAt(live as unknown as JsonValue, path, info);
      const wanted = valueAt(applied as unknown as JsonValue, path, info);
      if (current.found && !jsonEqual(current.value, wanted.value)) conflicts.push({ manager, key });
    }
  }
  return conflicts;
}

function conflictError(conflicts: Conflict[]) {
  const who = (m: Manager) =>
    `"${m.manager}"${m.subresource ? ` with subresource "${m.subresource}"` : ""} using ${m.apiVersion}`;
  const lines = conflicts.map((c) => `conflict with ${who(c.manager)}: ${formatPath(keyPath(c.key))}`);
  const count = conflicts.length === 1 ? "1 conflict" : `${conflicts.length} conflicts`;
  return statusError(409, "Conflict", `Apply failed with ${count}: ${lines.join("\n")}`, {
    causes: conflicts.map((c) => ({
      reason: "FieldManagerConflict",
      message: `conflict with ${who(c.manager)}`,
      field: formatPath(keyPath(c.key)),
    })),
  });
}

function ownedByOthers(key: string, others: Manager[]): boolean {
  const prefix = key.endsWith(".") ? key.slice(0, -1) : key;
  return others.some((m) => [...m.paths].some((p) => p === key || p.startsWith(prefix)));
}

/** Removes the field or list element a path names. */
function removePath(root: JsonObject, path: FieldPath, info: TypeInfo): void {
  const last = path[path.length - 1];
  const elementRemoval = last === ".";
  const target = elementRemoval ? path.slice(0, -1) : path;
  const step = target[target.length - 1];
  const parentPath = target.slice(0, -1);
  const parent =
    parentPath.length === 0 ? { found: true, value: root as JsonValue } : valueAt(root, parentPath, info);
  if (!parent.found || step === undefined) return;
  const container = parent.value;
  if (step.startsWith("f:") && isJsonObject(container)) delete container[step.slice(2)];
  else if (Array.isArray(container)) {
    const index = container.findIndex((item) =>
      step.startsWith("v:")
        ? jsonEqual(item, JSON.parse(step.slice(2)))
        : elementKey(item, listAt(parentPath, info)) === step,
    );
    if (index >= 0) container.splice(index, 1);
  }
}

function listAt(path: FieldPath, info: TypeInfo): ListType | undefined {
  let node: TypeInfo | undefined = info;
  for (const step of path) {
    if (step.startsWith("f:")) node = fieldInfo(node, step.slice(2));
    else if (step.startsWith("k:")) node = node?.elements;
  }
  return node?.list;
}

function mergeApplied(
  target: JsonValue | undefined,
  applied: JsonValue,
  info: TypeInfo | undefined,
): JsonValue {
  if (isJsonObject(applied) && !info?.atomic) {
    const result: JsonObject = isJsonObject(target) ? target : {};
    for (const [key, value] of Object.entries(applied)) {
      if (value === undefined) continue;
      result[key] = mergeApplied(result[key], value, fieldInfo(info, key));
    }
    return result;
  }
  if (Array.isArray(applied) && info?.list?.type === "map") {
    const list = info.list;
    const result = Array.isArray(target) ? target : [];
    for (const item of applied) {
      const index = result.findIndex((existing) => elementKey(existing, list) === elementKey(item, list));
      if (index >= 0) result[index] = mergeApplied(result[index], item, info.elements);
      else result.push(cloneObject(item));
    }
    return result;
  }
  if (Array.isArray(applied) && info?.list?.type === "set") {
    const result = Array.isArray(target) ? target : [];
    for (const item of applied)
      if (!result.some((existing) => jsonEqual(existing, item))) result.push(cloneObject(item));
    return result;
  }
  return cloneObject(applied);
}

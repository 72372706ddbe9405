// metadata.managedFields: which manager owns which fields. Every write records its manager:
// server-side apply replaces the applier's set; other writes ("Update") take ownership of the
// fields they changed, away from everyone else.
import type { JsonValue, KubeObject, ManagedFieldsEntry } from "../../../../services/kube/kube-object.ts";
import { formatMicroTime } from "../../../../services/kube/kube-time.ts";
import { jsonEqual } from "../core/json-object.ts";
import type { TypeInfo } from "../resources/type-info.ts";
import { fieldPaths, fromFieldsV1, keyPath, toFieldsV1, valueAt } from "./field-paths.ts";

export interface Manager {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  subresource?: string;
  time: string;
  paths: Set<string>;
}

export function readManagers(object: KubeObject): Manager[] {
  return (object.metadata.managedFields ?? []).map((entry) => ({
    manager: entry.manager,
    operation: entry.operation,
    apiVersion: entry.apiVersion,
    ...(entry.subresource ? { subresource: entry.subresource } : {}),
    time: entry.time,
    paths: fromFieldsV1(entry.fieldsV1 ?? {}),
  }));
}

export function writeManagers(object: KubeObject, managers: Manager[]): void {
  const entries: ManagedFieldsEntry[] = managers
    .filter((m) => m.paths.size > 0)
    .map((m) => ({
      manager: m.manager,
      operation: m.operation,
      apiVersion: m.apiVersion,
      time: m.time,
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1([...m.paths].sort()),
      ...(m.subresource ? { subresource: m.subresource } : {}),
    }));
  if (entries.length > 0) object.metadata.managedFields = entries;
  else delete object.metadata.managedFields;
}

export function sameManager(a: Pick<Manager, "manager" | "operation" | "subresource">, b: typeof a): boolean {
  return (
    a.manager === b.manager && a.operation === b.operation && (a.subresource ?? "") === (b.subresource ?? "")
  );
}

/** Paths whose values differ between two versions of an object (present in either). */
export function changedPaths(
  old: KubeObject | undefined,
  next: KubeObject,
  info: TypeInfo,
): { changed: Set<string>; removed: Set<string> } {
  const nextPaths = fieldPaths(next as unknown as JsonValue, info);
  if (!old) return { changed: nextPaths, removed: new Set() };
  const oldPaths = fieldPaths(old as unknown as JsonValue, info);
  const changed = new Set<string>();
  for (const key of nextPaths) {
    if (key.endsWith(".") && oldPaths.has(key)) continue;
    const before = valueAt(old as unknown as JsonValue, keyPath(key), info);
    const after = valueAt(next as unknown as JsonValue, keyPath(key), info);
    if (!before.found || !jsonEqual(before.value, after.value)) changed.add(key);
  }
  const removed = new Set([...oldPaths].filter((key) => !nextPaths.has(key)));
  return { changed, removed };
}

export interface UpdateRecord {
  manager: string;
  apiVersion: string;
  subresource?: string;
  now: number;
  info: TypeInfo;
}

/** Records a non-apply write on `next` (create, update, patch). */
export function recordUpdate(old: KubeObject | undefined, next: KubeObject, record: UpdateRecord): void {
  const managers = old ? readManagers(old) : readManagers(next);
  const { changed, removed } = changedPaths(old, next, record.info);
  for (const manager of managers) {
    for (const key of changed) manager.paths.delete(key);
    for (const key of removed) manager.paths.delete(key);
  }
  if (changed.size > 0) {
    const me = {
      manager: record.manager,
      operation: "Update" as const,
      ...(record.subresource ? { subresource: record.subresource } : {}),
    };
    let entry = managers.find((m) => sameManager(m, me));
    if (!entry) {
      entry = { ...me, apiVersion: record.apiVersion, time: "", paths: new Set() };
      managers.push(entry);
    }
    entry.apiVersion = record.apiVersion;
    entry.time = formatMicroTime(record.now).replace(/\.\d+Z$/, "Z");
    for (const key of changed) entry.paths.add(key);
  }
  writeManagers(next, managers);
}

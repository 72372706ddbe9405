// A served resource: its names, scope, verbs, subresources, table columns, merge metadata and
// (for custom resources) the schema its objects are validated against.

import type { JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import type { FieldError } from "../core/field-errors.ts";
import type { StructuralSchema } from "../schema/structural-schema.ts";
import type { TypeInfo } from "./type-info.ts";

export type ColumnType = "string" | "integer" | "number" | "boolean" | "date";

export interface PrinterColumn {
  name: string;
  type: ColumnType;
  format?: string;
  description?: string;
  /** 0 = default columns; 1 = shown with -o wide. */
  priority: number;
  cell: (object: KubeObject, now: number) => JsonValue;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** Which name rule metadata.name follows. */
export type NameRule = "subdomain" | "label" | "path-segment";

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  subresources: { status: boolean; scale?: ScaleSubresource };
  /** Table columns after NAME. */
  printerColumns: PrinterColumn[];
  typeInfo: TypeInfo;
  nameRule: NameRule;
  /** The version objects are stored in (custom resources with several versions). */
  storageVersion: string;
  /** Custom resources: the CRD's validation schema for this version. */
  schema?: StructuralSchema;
  /** The CustomResourceDefinition that defines this resource. */
  crdName?: string;
  /** Kind-specific defaults applied on create and update (built-in kinds). */
  defaults?: (object: KubeObject) => void;
  /** Kind-specific validation (built-in kinds). */
  validate?: (object: KubeObject, old: KubeObject | undefined) => FieldError[];
}

export const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export function groupResourceOf(type: Pick<ResourceType, "group" | "plural">): string {
  return type.group === "" ? type.plural : `${type.plural}.${type.group}`;
}

export function apiVersionOf(type: Pick<ResourceType, "group" | "version">): string {
  return type.group === "" ? type.version : `${type.group}/${type.version}`;
}

/** kubectl's duration.HumanDuration, used for AGE columns. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${days / 365}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

export function ageOf(object: KubeObject, now: number): string {
  const created = object.metadata.creationTimestamp;
  return created ? humanDuration(now - Date.parse(created)) : "<unknown>";
}

export const ageColumn: PrinterColumn = {
  name: "Age",
  type: "string",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  priority: 0,
  cell: ageOf,
};

// A compact way to declare a built-in kind: only what differs from the defaults is written.
import { ageColumn, type PrinterColumn, type ResourceType } from "./resource-type.ts";
import { objectMetaInfo, type TypeInfo } from "./type-info.ts";

export interface KindDeclaration {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  scale?: ResourceType["subresources"]["scale"];
  /** Columns between NAME and AGE. */
  columns?: PrinterColumn[];
  /** Columns after AGE (usually -o wide ones). */
  trailingColumns?: PrinterColumn[];
  noAge?: boolean;
  fields?: Record<string, TypeInfo>;
  nameRule?: ResourceType["nameRule"];
  defaults?: ResourceType["defaults"];
  validate?: ResourceType["validate"];
}

export function defineKind(d: KindDeclaration): ResourceType {
  return {
    group: d.group,
    version: d.version,
    kind: d.kind,
    listKind: `${d.kind}List`,
    plural: d.plural,
    singular: d.kind.toLowerCase(),
    namespaced: d.namespaced,
    shortNames: d.shortNames ?? [],
    categories: d.categories ?? [],
    subresources: { status: d.status ?? false, ...(d.scale ? { scale: d.scale } : {}) },
    printerColumns: [...(d.columns ?? []), ...(d.noAge ? [] : [ageColumn]), ...(d.trailingColumns ?? [])],
    typeInfo: { fields: { metadata: objectMetaInfo, ...(d.fields ?? {}) } },
    nameRule: d.nameRule ?? "subdomain",
    storageVersion: d.version,
    ...(d.defaults ? { defaults: d.defaults } : {}),
    ...(d.validate ? { validate: d.validate } : {}),
  };
}

/** A column whose cell is computed from the object. */
export function column(
  name: string,
  cell: PrinterColumn["cell"],
  options: { priority?: number; type?: PrinterColumn["type"]; description?: string } = {},
): PrinterColumn {
  return {
    name,
    type: options.type ?? "string",
    priority: options.priority ?? 0,
    ...(options.description ? { description: options.description } : {}),
    cell,
  };
}

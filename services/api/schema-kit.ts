// Helpers that make a zod schema the one typed source of truth of a CRD: each field carries its
// documentation and Kubernetes extensions (CEL rules, list types) as zod metadata, zod parses and
// defaults objects at run time, and `structuralSchema` turns the same schema into the OpenAPI v3
// structural schema a CustomResourceDefinition serves.
import { z } from "zod";

/** One `x-kubernetes-validations` entry: a CEL rule and the message the API server returns. */
export interface CelRule {
  rule: string;
  message: string;
  /** Where the error points, relative to the node the rule is on (e.g. `.parallelism.pipeline`). */
  fieldPath?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired";
}

export interface FieldDoc {
  /** Rules evaluated on this node. */
  rules?: CelRule[];
  /** `x-kubernetes-list-type` (with map keys for "map"). */
  listType?: "atomic" | "set" | "map";
  listMapKeys?: string[];
}

/** Documents a field: the description shown by `kubectl explain`, plus its Kubernetes extensions. */
export function doc<T extends z.ZodType>(schema: T, description: string, extra: FieldDoc = {}): T {
  const meta: Record<string, unknown> = { description };
  if (extra.rules) meta["x-kubernetes-validations"] = extra.rules;
  if (extra.listType) meta["x-kubernetes-list-type"] = extra.listType;
  if (extra.listMapKeys) meta["x-kubernetes-list-map-keys"] = extra.listMapKeys;
  return schema.meta(meta);
}

/** Rule: a field that, once set, cannot change (`oldSelf` transition rule). */
export function immutable(what: string): CelRule {
  return { rule: "self == oldSelf", message: `${what} is immutable` };
}

const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

const QUANTITY_MARK = "x-tessera-quantity";
const FREE_FORM_MARK = "x-tessera-free-form";

/** A Kubernetes resource quantity ("500m", "4Gi", 2), as int-or-string like core/v1 does. */
export function quantity(): z.ZodType<string | number> {
  return z
    .union([z.int().min(0), z.string().regex(new RegExp(QUANTITY_PATTERN))])
    .meta({ [QUANTITY_MARK]: true });
}

/** An object kept as is (affinity, a toleration's extra fields): the API server does not prune it. */
export function freeForm(): z.ZodType<Record<string, unknown>> {
  return z.record(z.string(), z.unknown()).meta({ [FREE_FORM_MARK]: true });
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type OpenApiSchema = { [key: string]: Json };

/** The structural OpenAPI v3 schema of a zod schema (input side: defaulted fields are optional). */
export function structuralSchema(schema: z.ZodType): OpenApiSchema {
  const raw = z.toJSONSchema(schema, { target: "openapi-3.0", io: "input", unrepresentable: "throw" });
  return clean(raw as unknown as Json) as OpenApiSchema;
}

function clean(node: Json): Json {
  if (Array.isArray(node)) return node.map(clean);
  if (node === null || typeof node !== "object") return node;
  if (node[QUANTITY_MARK] === true) return quantitySchema(node["description"]);
  if (node[FREE_FORM_MARK] === true) return freeFormSchema(node["description"]);
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema" || (key === "additionalProperties" && value === false)) continue;
    if ((key === "maximum" || key === "minimum") && Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER)
      continue;
    out[key] = key === "properties" ? cleanProperties(value) : clean(value);
  }
  return out;
}

function cleanProperties(properties: Json): Json {
  if (properties === null || typeof properties !== "object" || Array.isArray(properties)) return properties;
  return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, clean(v)]));
}

function quantitySchema(description: Json | undefined): Json {
  return {
    ...(description !== undefined ? { description } : {}),
    anyOf: [{ type: "integer" }, { type: "string" }],
    pattern: QUANTITY_PATTERN,
    "x-kubernetes-int-or-string": true,
  };
}

function freeFormSchema(description: Json | undefined): Json {
  return {
    ...(description !== undefined ? { description } : {}),
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
  };
}

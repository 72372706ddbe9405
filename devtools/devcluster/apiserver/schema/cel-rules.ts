// x-kubernetes-validations: CEL rules evaluated with `self` bound to the value at the rule's node
// and `oldSelf` to the previous value on update (transition rules are skipped on create).
// Values are typed by the schema, as Kubernetes does: integers become CEL ints, objects maps.
import { isCelError, parse, run } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { type FieldError, joinField } from "../core/field-errors.ts";
import { isJsonObject } from "../core/json-object.ts";
import { propertySchema, type StructuralSchema, type ValidationRule } from "./structural-schema.ts";

type CelInput = Parameters<typeof run>[1] extends Record<string, infer V> | undefined ? V : never;

/** Converts a JSON value to the CEL value its schema implies. */
export function toCel(value: JsonValue, schema: StructuralSchema | undefined): CelInput {
  if (value === null) return null;
  if (typeof value === "number") {
    const integral =
      schema?.type === "integer" ||
      schema?.["x-kubernetes-int-or-string"] ||
      (!schema?.type && Number.isInteger(value));
    return integral && Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map((item) => toCel(item, schema?.items));
  const entries = Object.entries(value).filter(([, v]) => v !== undefined) as [string, JsonValue][];
  return new Map(entries.map(([k, v]) => [k, toCel(v, propertySchema(schema, k))]));
}

const REFERS_TO_OLD_SELF = /\boldSelf\b/;

function evaluateRule(
  rule: ValidationRule,
  value: JsonValue,
  old: JsonValue | undefined,
  schema: StructuralSchema,
  path: string,
): FieldError | undefined {
  const transition = REFERS_TO_OLD_SELF.test(rule.rule);
  if (transition && old === undefined && !rule.optionalOldSelf) return undefined;
  const bindings: Record<string, CelInput> = { self: toCel(value, schema) };
  if (transition && old !== undefined) bindings["oldSelf"] = toCel(old, schema);
  let result: unknown;
  try {
    result = run(rule.rule, bindings, { funcs: strings });
  } catch (err) {
    result = err;
  }
  if (result === true) return undefined;
  const field = rule.fieldPath
    ? `${path}${rule.fieldPath.startsWith("[") ? "" : "."}${rule.fieldPath.replace(/^\./, "")}`
    : path;
  const shown = Array.isArray(value) ? "array" : isJsonObject(value) ? "object" : value;
  const detail =
    isCelError(result) || result instanceof Error
      ? `${rule.rule}: ${(result as Error).message}`
      : (rule.message ?? `failed rule: ${rule.rule}`);
  const type =
    rule.reason === "FieldValueForbidden"
      ? "Forbidden"
      : rule.reason === "FieldValueRequired"
        ? "Required"
        : rule.reason === "FieldValueDuplicate"
          ? "Duplicate"
          : "Invalid";
  return type === "Invalid" || type === "Duplicate"
    ? { type, field, value: shown, detail }
    : { type, field, detail };
}

function correlate(
  old: JsonValue | undefined,
  key: string | number,
  item: JsonValue,
  schema: StructuralSchema,
): JsonValue | undefined {
  if (typeof key === "string") return isJsonObject(old) ? old[key] : undefined;
  if (!Array.isArray(old) || schema["x-kubernetes-list-type"] !== "map") return undefined;
  const keys = schema["x-kubernetes-list-map-keys"] ?? [];
  if (!isJsonObject(item)) return undefined;
  return old.find(
    (o) => isJsonObject(o) && keys.every((k) => JSON.stringify(o[k]) === JSON.stringify(item[k])),
  );
}

/** Runs every CEL rule of the schema tree against value (and old, on update). */
export function checkCelRules(
  value: JsonValue,
  old: JsonValue | undefined,
  schema: StructuralSchema,
  path: string,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const rule of schema["x-kubernetes-validations"] ?? []) {
    const error = evaluateRule(rule, value, old, schema, path);
    if (error) errors.push(error);
  }
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    value.forEach((item, i) => {
      errors.push(...checkCelRules(item, correlate(old, i, item, schema), items, joinField(path, i)));
    });
  } else if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      const childSchema = propertySchema(schema, key);
      if (child !== undefined && childSchema) {
        errors.push(
          ...checkCelRules(child, correlate(old, key, child, schema), childSchema, joinField(path, key)),
        );
      }
    }
  }
  return errors;
}

/** Parse-checks every rule of a schema (CRD creation rejects rules that do not compile). */
export function compileErrors(schema: StructuralSchema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  (schema["x-kubernetes-validations"] ?? []).forEach((rule, i) => {
    try {
      parse(rule.rule);
    } catch (err) {
      const detail = `compilation failed: ${err instanceof Error ? err.message : String(err)}`;
      errors.push({
        type: "Invalid",
        field: `${path}.x-kubernetes-validations[${i}].rule`,
        value: rule.rule,
        detail,
      });
    }
  });
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    errors.push(...compileErrors(child, `${path}.properties[${key}]`));
  if (schema.items) errors.push(...compileErrors(schema.items, `${path}.items`));
  if (typeof schema.additionalProperties === "object")
    errors.push(...compileErrors(schema.additionalProperties, `${path}.additionalProperties`));
  return errors;
}

// OpenAPI v3 validation of custom objects, with the messages the Kubernetes API server gives
// (go-openapi wording: "spec.replicas in body should be greater than or equal to 0").

import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { type FieldError, fieldError, joinField } from "../core/field-errors.ts";
import { isJsonObject, jsonEqual } from "../core/json-object.ts";
import { propertySchema, type StructuralSchema } from "./structural-schema.ts";

type Checker = (value: JsonValue, schema: StructuralSchema, path: string) => FieldError[];

function typeOf(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function wantedType(schema: StructuralSchema): string {
  return schema["x-kubernetes-int-or-string"] ? "integer,string" : (schema.type ?? "object");
}

function typeMatches(value: JsonValue, schema: StructuralSchema): boolean {
  if (schema["x-kubernetes-int-or-string"]) return typeof value === "string" || Number.isInteger(value);
  if (!schema.type) return true;
  const actual = typeOf(value);
  return actual === schema.type || (schema.type === "number" && actual === "integer");
}

const checkNumber: Checker = (value, schema, path) => {
  if (typeof value !== "number") return [];
  const errors: FieldError[] = [];
  const where = `${path} in body`;
  if (schema.minimum !== undefined) {
    const bad = schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum;
    const relation = schema.exclusiveMinimum ? "greater than" : "greater than or equal to";
    if (bad) errors.push(fieldError.invalid(path, value, `${where} should be ${relation} ${schema.minimum}`));
  }
  if (schema.maximum !== undefined) {
    const bad = schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum;
    const relation = schema.exclusiveMaximum ? "less than" : "less than or equal to";
    if (bad) errors.push(fieldError.invalid(path, value, `${where} should be ${relation} ${schema.maximum}`));
  }
  if (schema.multipleOf !== undefined && value % schema.multipleOf !== 0) {
    errors.push(fieldError.invalid(path, value, `${where} should be a multiple of ${schema.multipleOf}`));
  }
  return errors;
};

const checkString: Checker = (value, schema, path) => {
  if (typeof value !== "string") return [];
  const errors: FieldError[] = [];
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength) {
    errors.push(
      fieldError.invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`),
    );
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    errors.push({
      type: "TooLong",
      field: path,
      value,
      detail: `may not be more than ${schema.maxLength} bytes`,
    });
  }
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) {
    errors.push(fieldError.invalid(path, value, `${path} in body should match '${schema.pattern}'`));
  }
  return errors;
};

const checkArray: Checker = (value, schema, path) => {
  if (!Array.isArray(value)) return [];
  const errors: FieldError[] = [];
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push(
      fieldError.invalid(path, value.length, `${path} in body should have at least ${schema.minItems} items`),
    );
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push(fieldError.invalid(path, value.length, `must have at most ${schema.maxItems} items`));
  }
  const listType = schema["x-kubernetes-list-type"];
  if (schema.uniqueItems || listType === "set") {
    value.forEach((item, i) => {
      if (value.findIndex((other) => jsonEqual(other, item)) < i)
        errors.push(fieldError.duplicate(joinField(path, i), item));
    });
  }
  if (listType === "map") {
    const keys = schema["x-kubernetes-list-map-keys"] ?? [];
    const seen = new Set<string>();
    value.forEach((item, i) => {
      const id = JSON.stringify(keys.map((k) => (isJsonObject(item) ? item[k] : undefined)));
      if (seen.has(id)) errors.push(fieldError.duplicate(joinField(path, i), item));
      seen.add(id);
    });
  }
  const items = schema.items;
  if (items) value.forEach((item, i) => void errors.push(...validateValue(item, items, joinField(path, i))));
  return errors;
};

const checkObject: Checker = (value, schema, path) => {
  if (!isJsonObject(value)) return [];
  const errors: FieldError[] = [];
  for (const key of schema.required ?? []) {
    if (value[key] === undefined) errors.push(fieldError.required(joinField(path, key)));
  }
  const count = Object.keys(value).length;
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errors.push(
      fieldError.invalid(
        path,
        count,
        `${path} in body should have at least ${schema.minProperties} properties`,
      ),
    );
  }
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push(
      fieldError.invalid(
        path,
        count,
        `${path} in body should have at most ${schema.maxProperties} properties`,
      ),
    );
  }
  for (const [key, child] of Object.entries(value)) {
    const childSchema = propertySchema(schema, key);
    if (child !== undefined && childSchema)
      errors.push(...validateValue(child, childSchema, joinField(path, key)));
  }
  return errors;
};

const checkCombinators: Checker = (value, schema, path) => {
  const errors: FieldError[] = [];
  for (const sub of schema.allOf ?? []) errors.push(...validateValue(value, sub, path));
  if (schema.anyOf && !schema.anyOf.some((sub) => validateValue(value, sub, path).length === 0)) {
    errors.push(fieldError.invalid(path, value, `${path} in body must be valid against any of the schemas`));
  }
  if (
    schema.oneOf &&
    schema.oneOf.filter((sub) => validateValue(value, sub, path).length === 0).length !== 1
  ) {
    errors.push(
      fieldError.invalid(path, value, `${path} in body must validate one and only one schema (oneOf)`),
    );
  }
  if (schema.not && validateValue(value, schema.not, path).length === 0) {
    errors.push(fieldError.invalid(path, value, `${path} in body must not validate the schema (not)`));
  }
  return errors;
};

/** Validates a value against its schema; path is the field path printed in errors. */
export function validateValue(value: JsonValue, schema: StructuralSchema, path: string): FieldError[] {
  if (value === null) {
    if (schema.nullable || (!schema.type && !schema["x-kubernetes-int-or-string"])) return [];
    return [
      fieldError.invalid(path, null, `${path} in body must be of type ${schema.type ?? "object"}: "null"`),
    ];
  }
  if (!typeMatches(value, schema)) {
    return [
      fieldError.invalid(
        path,
        value,
        `${path} in body must be of type ${wantedType(schema)}: "${typeOf(value)}"`,
      ),
    ];
  }
  if (schema.enum && !schema.enum.some((allowed) => jsonEqual(allowed, value))) {
    return [fieldError.notSupported(path, value, schema.enum)];
  }
  return [checkNumber, checkString, checkArray, checkObject, checkCombinators].flatMap((check) =>
    check(value, schema, path),
  );
}

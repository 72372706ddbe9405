// The OpenAPI v3 subset a CustomResourceDefinition's structural schema uses, with the Kubernetes
// extensions that change how values are pruned, defaulted, merged and validated.
import type { JsonValue } from "../../../../services/kube/kube-object.ts";

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface StructuralSchema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  description?: string;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  enum?: JsonValue[];
  default?: JsonValue;
  nullable?: boolean;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  allOf?: StructuralSchema[];
  anyOf?: StructuralSchema[];
  oneOf?: StructuralSchema[];
  not?: StructuralSchema;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-validations"?: ValidationRule[];
}

/** The schema of a property of an object schema (named property first, then additionalProperties). */
export function propertySchema(
  schema: StructuralSchema | undefined,
  key: string,
): StructuralSchema | undefined {
  if (!schema) return undefined;
  const named = schema.properties?.[key];
  if (named) return named;
  return typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
}

/** Whether unknown keys at this level are kept (preserve-unknown-fields or a map of anything). */
export function keepsUnknownFields(schema: StructuralSchema): boolean {
  return (
    schema["x-kubernetes-preserve-unknown-fields"] === true ||
    schema.additionalProperties === true ||
    typeof schema.additionalProperties === "object"
  );
}

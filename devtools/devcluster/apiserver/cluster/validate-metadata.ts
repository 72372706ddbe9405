// Validation of object metadata every kind shares: names, label and annotation keys and values.

import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { type FieldError, fieldError } from "../core/field-errors.ts";
import type { NameRule } from "../resources/resource-type.ts";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export function nameErrors(name: string, rule: NameRule, field = "metadata.name"): FieldError[] {
  switch (rule) {
    case "label":
      if (name.length > 63) return [fieldError.invalid(field, name, "must be no more than 63 characters")];
      return DNS_LABEL.test(name)
        ? []
        : [
            fieldError.invalid(
              field,
              name,
              `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
            ),
          ];
    case "subdomain":
      if (name.length > 253) return [fieldError.invalid(field, name, "must be no more than 253 characters")];
      return DNS_SUBDOMAIN.test(name)
        ? []
        : [
            fieldError.invalid(
              field,
              name,
              `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
            ),
          ];
    case "path-segment":
      return name === "." || name === ".." || /[/%]/.test(name)
        ? [fieldError.invalid(field, name, `may not contain '/' or '%'`)]
        : [];
    default: {
      const never: never = rule;
      return never;
    }
  }
}

export function validateMetadata(object: KubeObject, rule: NameRule): FieldError[] {
  const meta = object.metadata;
  const errors: FieldError[] = [];
  if (!meta.name) errors.push(fieldError.required("metadata.name", "name or generateName is required"));
  else errors.push(...nameErrors(meta.name, rule));
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    if (!QUALIFIED_NAME.test(key))
      errors.push(
        fieldError.invalid(
          "metadata.labels",
          key,
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
    if (typeof value !== "string" || value.length > 63 || !LABEL_VALUE.test(value)) {
      errors.push(
        fieldError.invalid(
          `metadata.labels`,
          value,
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
    }
  }
  for (const key of Object.keys(meta.annotations ?? {})) {
    if (!QUALIFIED_NAME.test(key))
      errors.push(
        fieldError.invalid(
          "metadata.annotations",
          key,
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
  }
  return errors;
}

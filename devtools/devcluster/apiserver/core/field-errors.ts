// Field-level validation errors, formatted as the Kubernetes API machinery formats them so that
// kubectl prints familiar messages ("spec.replicas: Invalid value: -1: ...").

export type FieldErrorType = "Required" | "Invalid" | "NotSupported" | "Forbidden" | "Duplicate" | "TooLong";

export interface FieldError {
  type: FieldErrorType;
  field: string;
  value?: unknown;
  detail?: string;
}

const REASONS: Record<FieldErrorType, string> = {
  Required: "FieldValueRequired",
  Invalid: "FieldValueInvalid",
  NotSupported: "FieldValueNotSupported",
  Forbidden: "FieldValueForbidden",
  Duplicate: "FieldValueDuplicate",
  TooLong: "FieldValueTooLong",
};

export function causeReason(error: FieldError): string {
  return REASONS[error.type];
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return '"array"';
  if (typeof value === "object" && value !== null) return '"object"';
  return JSON.stringify(value) ?? "null";
}

/** The message without the field prefix ("Invalid value: -1: must be >= 0"). */
export function causeMessage(error: FieldError): string {
  const detail = error.detail ? `: ${error.detail}` : "";
  switch (error.type) {
    case "Required":
      return `Required value${detail}`;
    case "Invalid":
      return `Invalid value: ${describeValue(error.value)}${detail}`;
    case "NotSupported":
      return `Unsupported value: ${describeValue(error.value)}${detail}`;
    case "Forbidden":
      return `Forbidden${detail}`;
    case "Duplicate":
      return `Duplicate value: ${describeValue(error.value)}`;
    case "TooLong":
      return `Too long${detail}`;
    default: {
      const never: never = error.type;
      return never;
    }
  }
}

export function formatFieldError(error: FieldError): string {
  return `${error.field}: ${causeMessage(error)}`;
}

export const fieldError = {
  required: (field: string, detail?: string): FieldError => ({
    type: "Required",
    field,
    ...(detail ? { detail } : {}),
  }),
  invalid: (field: string, value: unknown, detail: string): FieldError => ({
    type: "Invalid",
    field,
    value,
    detail,
  }),
  notSupported: (field: string, value: unknown, supported: readonly unknown[]): FieldError => ({
    type: "NotSupported",
    field,
    value,
    detail: `supported values: ${supported.map((v) => JSON.stringify(v)).join(", ")}`,
  }),
  forbidden: (field: string, detail: string): FieldError => ({ type: "Forbidden", field, detail }),
  duplicate: (field: string, value: unknown): FieldError => ({ type: "Duplicate", field, value }),
};

/** Joins path segments the way field paths print: spec.containers[0].name */
export function joinField(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

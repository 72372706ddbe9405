// Kubernetes `Status` objects and their mapping to TesseraError. A TesseraError raised by the API
// server carries the Status it should be answered with as its cause; anything else maps by code.
import { Code, TesseraError } from "../../../../services/kernel/errors.ts";
import { causeMessage, causeReason, type FieldError, formatFieldError } from "./field-errors.ts";

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Success" | "Failure";
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

/** What identifies the object an error is about: resource (plural) and group, as Kubernetes prints. */
export interface ResourceName {
  group: string;
  resource: string;
  name?: string;
}

const GRPC_BY_HTTP: Record<number, Code> = {
  400: Code.INVALID_ARGUMENT,
  403: Code.PERMISSION_DENIED,
  404: Code.NOT_FOUND,
  405: Code.UNIMPLEMENTED,
  406: Code.INVALID_ARGUMENT,
  409: Code.ABORTED,
  410: Code.OUT_OF_RANGE,
  415: Code.INVALID_ARGUMENT,
  422: Code.INVALID_ARGUMENT,
  500: Code.INTERNAL,
  504: Code.DEADLINE_EXCEEDED,
};

export function statusError(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): TesseraError {
  const status: KubeStatus = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
  const grpc = reason === "AlreadyExists" ? Code.ALREADY_EXISTS : (GRPC_BY_HTTP[code] ?? Code.UNKNOWN);
  return new TesseraError(grpc, message, { cause: status });
}

function qualified(ref: ResourceName): string {
  return ref.group === "" ? ref.resource : `${ref.resource}.${ref.group}`;
}

function detailsOf(ref: ResourceName): StatusDetails {
  return { ...(ref.name !== undefined ? { name: ref.name } : {}), group: ref.group, kind: ref.resource };
}

export const apiErrors = {
  notFound: (ref: ResourceName) =>
    statusError(404, "NotFound", `${qualified(ref)} "${ref.name ?? ""}" not found`, detailsOf(ref)),
  alreadyExists: (ref: ResourceName) =>
    statusError(409, "AlreadyExists", `${qualified(ref)} "${ref.name ?? ""}" already exists`, detailsOf(ref)),
  conflict: (ref: ResourceName, why: string) =>
    statusError(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${qualified(ref)} "${ref.name ?? ""}": ${why}`,
      detailsOf(ref),
    ),
  /** 422: `Kind.group "name" is invalid: field: message` with one cause per field error. */
  invalid: (kind: string, group: string, name: string, errors: readonly FieldError[]) => {
    const what = group === "" ? kind : `${kind}.${group}`;
    const list = errors.map(formatFieldError);
    const joined = list.length === 1 ? list[0] : `[${list.join(", ")}]`;
    return statusError(422, "Invalid", `${what} "${name}" is invalid: ${joined}`, {
      name,
      group,
      kind,
      causes: errors.map((e) => ({ reason: causeReason(e), message: causeMessage(e), field: e.field })),
    });
  },
  /** The URL names no resource this server serves. */
  noResource: () => statusError(404, "NotFound", "the server could not find the requested resource", {}),
  badRequest: (message: string, causes?: StatusCause[]) =>
    statusError(400, "BadRequest", message, causes ? { causes } : undefined),
  forbidden: (message: string) => statusError(403, "Forbidden", message),
  methodNotAllowed: (message: string) => statusError(405, "MethodNotAllowed", message),
  notAcceptable: (message: string) => statusError(406, "NotAcceptable", message),
  unsupportedMediaType: (contentType: string) =>
    statusError(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format: ${contentType}`,
    ),
  expired: (message: string) => statusError(410, "Expired", message),
  internal: (message: string) => statusError(500, "InternalError", `Internal error occurred: ${message}`),
};

export function isKubeStatus(value: unknown): value is KubeStatus {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "Status";
}

const HTTP_BY_GRPC: Partial<Record<Code, [number, string]>> = {
  [Code.NOT_FOUND]: [404, "NotFound"],
  [Code.ALREADY_EXISTS]: [409, "AlreadyExists"],
  [Code.ABORTED]: [409, "Conflict"],
  [Code.INVALID_ARGUMENT]: [400, "BadRequest"],
  [Code.FAILED_PRECONDITION]: [400, "BadRequest"],
  [Code.PERMISSION_DENIED]: [403, "Forbidden"],
  [Code.UNIMPLEMENTED]: [405, "MethodNotAllowed"],
  [Code.OUT_OF_RANGE]: [410, "Expired"],
  [Code.DEADLINE_EXCEEDED]: [504, "Timeout"],
};

/** The Status to answer a failed request with. */
export function toStatus(err: unknown): KubeStatus {
  const error = TesseraError.from(err);
  if (isKubeStatus(error.cause)) return error.cause;
  const [code, reason] = HTTP_BY_GRPC[error.code] ?? [500, "InternalError"];
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: error.message,
    reason,
    code,
  };
}

export function statusCodeOf(err: unknown): number {
  return toStatus(err).code;
}

export function successStatus(details?: StatusDetails): KubeStatus {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    message: "",
    reason: "",
    ...(details ? { details } : {}),
    code: 200,
  };
}

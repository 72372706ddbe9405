// A failed API call: a TesseraError carrying the HTTP status and the Kubernetes Status reason, so
// callers switch on 404 (gone), 409 (conflict: requeue) and 410 (watch too old: relist).
import { Code, TesseraError } from "../kernel/errors.ts";
import { isObject } from "./kube-object.ts";

const GRPC_OF_HTTP: Record<number, Code> = {
  400: Code.INVALID_ARGUMENT,
  401: Code.UNAUTHENTICATED,
  403: Code.PERMISSION_DENIED,
  404: Code.NOT_FOUND,
  409: Code.ABORTED,
  410: Code.OUT_OF_RANGE,
  422: Code.INVALID_ARGUMENT,
  429: Code.RESOURCE_EXHAUSTED,
  504: Code.DEADLINE_EXCEEDED,
};

export class KubeApiError extends TesseraError {
  readonly status: number;
  readonly reason: string;

  constructor(status: number, reason: string, message: string, options?: { cause?: unknown }) {
    super(GRPC_OF_HTTP[status] ?? Code.UNAVAILABLE, message, options);
    this.name = "KubeApiError";
    this.status = status;
    this.reason = reason;
  }

  /** From a response: the Status body when there is one, else the HTTP status line. */
  static fromResponse(status: number, body: string, what: string): KubeApiError {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (isObject(parsed) && parsed["kind"] === "Status") {
      const reason = typeof parsed["reason"] === "string" ? parsed["reason"] : "";
      const message = typeof parsed["message"] === "string" ? parsed["message"] : body;
      return new KubeApiError(status, reason, `${what}: ${message}`, { cause: parsed });
    }
    return new KubeApiError(status, "", `${what}: HTTP ${status} ${body.slice(0, 200)}`.trim());
  }
}

export function statusOf(err: unknown): number | undefined {
  return err instanceof KubeApiError ? err.status : undefined;
}

export const isNotFound = (err: unknown) => statusOf(err) === 404;
export const isConflict = (err: unknown) => statusOf(err) === 409;
export const isGone = (err: unknown) => statusOf(err) === 410;

// Errors as OpenAI-compatible HTTP responses: the status from the gRPC code, a JSON body
// { error: { message, type, param, code } }, and for 429/503 the retry hint as Retry-After (seconds)
// and retry-after-ms (which the official OpenAI clients honour).
import type { ServerResponse } from "node:http";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { PayloadTooLarge } from "./request-body.ts";

const STATUS: Partial<Record<Code, number>> = {
  [Code.INVALID_ARGUMENT]: 400,
  [Code.OUT_OF_RANGE]: 400,
  [Code.FAILED_PRECONDITION]: 400,
  [Code.UNAUTHENTICATED]: 401,
  [Code.PERMISSION_DENIED]: 403,
  [Code.NOT_FOUND]: 404,
  [Code.ALREADY_EXISTS]: 409,
  [Code.RESOURCE_EXHAUSTED]: 429,
  [Code.CANCELLED]: 499,
  [Code.UNIMPLEMENTED]: 501,
  [Code.UNAVAILABLE]: 503,
  [Code.DEADLINE_EXCEEDED]: 504,
};

export function httpStatus(code: Code): number {
  return STATUS[code] ?? 500;
}

export function errorBody(error: TesseraError, status = httpStatus(error.code)) {
  const type =
    status === 401
      ? "authentication_error"
      : status === 429
        ? "rate_limit_error"
        : status < 500
          ? "invalid_request_error"
          : "server_error";
  const param =
    error.code === Code.INVALID_ARGUMENT ? (error.message.match(/^([\w.[\]]+):/)?.[1] ?? null) : null;
  return {
    error: { message: error.message, type, param, code: (Code[error.code] ?? "UNKNOWN").toLowerCase() },
  };
}

export function sendError(res: ServerResponse, err: unknown, headers: Record<string, string> = {}): void {
  const error = TesseraError.from(err);
  if (error instanceof PayloadTooLarge) {
    sendJson(res, 413, errorBody(error, 413), headers);
    return;
  }
  const retry =
    error.retryAfterMs === undefined
      ? {}
      : {
          "retry-after": String(Math.max(1, Math.ceil(error.retryAfterMs / 1_000))),
          "retry-after-ms": String(error.retryAfterMs),
        };
  sendJson(res, httpStatus(error.code), errorBody(error), { ...headers, ...retry });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

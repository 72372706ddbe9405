import { status as GrpcStatus } from "@grpc/grpc-js";

/** gRPC status codes, re-exported so modules need not import grpc-js to raise an error. */
export const Code = GrpcStatus;
export type Code = GrpcStatus;

/**
 * The one error type of Tessera: a message for the user, a gRPC status code and an optional cause.
 * Convert anything caught at a boundary with `TesseraError.from(err)`.
 */
export class TesseraError extends Error {
  readonly code: Code;
  /** When retrying may succeed (RESOURCE_EXHAUSTED, UNAVAILABLE): a hint in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(code: Code, message: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(message, options);
    this.name = "TesseraError";
    this.code = code;
    this.retryAfterMs = options?.retryAfterMs;
  }

  static invalidArgument(field: string, message: string): TesseraError {
    return new TesseraError(Code.INVALID_ARGUMENT, `${field}: ${message}`);
  }

  static notFound(message: string): TesseraError {
    return new TesseraError(Code.NOT_FOUND, message);
  }

  static from(err: unknown): TesseraError {
    if (err instanceof TesseraError) return err;
    if (err instanceof Error) return new TesseraError(Code.INTERNAL, err.message, { cause: err });
    return new TesseraError(Code.INTERNAL, String(err), { cause: err });
  }
}

/** Parsers return a value or an error instead of throwing. */
export type Result<T> = { value: T; error?: undefined } | { value?: undefined; error: TesseraError };

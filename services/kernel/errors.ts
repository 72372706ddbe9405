/** The names of the gRPC status codes, in the order of their values (grpc-js's `status`). */
const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;

type CodeName = (typeof CODE_NAMES)[number];

/**
 * gRPC status codes, by name and (like grpc-js's `status` enum) name by value. Defined here rather
 * than re-exported from grpc-js so that a module raising an error does not load grpc-js: the model
 * thread of a single process needs none of it, and it is ~7 MiB of a V8 heap (issue 18).
 */
export const Code = Object.freeze(
  Object.fromEntries(
    CODE_NAMES.flatMap((name, value) => [
      [name, value],
      [value, name],
    ]),
  ),
) as { readonly [N in CodeName]: number } & { readonly [value: number]: CodeName | undefined };
/** A gRPC status code's value (grpc-js's `status`). */
export type Code = number;

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

// Errors of Redis and of ioredis as TesseraErrors. A reply error is the server's answer to one
// command (OOM under noeviction, WRONGTYPE, NOAUTH); anything else (connection closed or reset,
// refused, not writable) means Redis cannot be reached: UNAVAILABLE, and the caller falls back.
import { Code, TesseraError } from "../../kernel/errors.ts";

/** True for an error the server replied to one command (ioredis names them "ReplyError"). */
export function isReplyError(err: unknown): err is Error {
  return err instanceof Error && err.name === "ReplyError";
}

export function isAuthError(err: unknown): boolean {
  return isReplyError(err) && /^(WRONGPASS|NOAUTH|NOPERM)/.test(err.message);
}

/** `err` of operation `op` as a TesseraError with a status code the caller can act on. */
export function redisError(err: unknown, op: string): TesseraError {
  if (err instanceof TesseraError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const error = (code: Code, what: string) =>
    new TesseraError(code, `KV store ${op}: ${what}: ${message}`, { cause: err });
  if (!isReplyError(err)) return error(Code.UNAVAILABLE, "Redis unreachable");
  if (message.startsWith("OOM")) return error(Code.RESOURCE_EXHAUSTED, "Redis is out of memory");
  if (isAuthError(err)) return error(Code.UNAVAILABLE, "Redis refused the credentials");
  if (/^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN)/.test(message))
    return error(Code.UNAVAILABLE, "Redis cannot serve now");
  return error(Code.INTERNAL, "Redis replied with an error");
}

// Why a server could not start listening, as one line a user can act on. Every Tessera listener (gRPC,
// HTTP, metrics, health) that fails at start-up throws this, naming the address and the setting that
// chose it, e.g. `cannot listen on 127.1.0.3:8080 (httpPort): address in use`; the CLI prints it and
// exits non-zero, so a pod restarts instead of running half started.
import { Code, TesseraError } from "./errors.ts";

/** What the common listen errors mean, in words. */
const REASONS: Record<string, string> = {
  EADDRINUSE: "address in use",
  EADDRNOTAVAIL: "address not available on this machine",
  EACCES: "permission denied (ports below 1024 need privileges)",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name not resolved (DNS unavailable)",
};

/**
 * `address`: host:port as listened on; `setting`: the flag or config field that chose it (`--port`,
 * `httpPort`); `err`: what listen raised (Node's errno error, or grpc-js's bind error, which carries
 * it in its message).
 */
export function listenFailure(address: string, setting: string, err: unknown): TesseraError {
  return new TesseraError(Code.UNAVAILABLE, `cannot listen on ${address} (${setting}): ${reasonOf(err)}`, {
    cause: err,
  });
}

/** host:port, IPv6 hosts bracketed. */
export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function reasonOf(err: unknown): string {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    // Node's errors carry the errno name in `code` (a TesseraError's is a gRPC number); grpc-js's only in
    // the message.
    const own = (e as { code?: unknown }).code;
    const code = typeof own === "string" ? own : /\b(E[A-Z_]{4,})\b/.exec(e.message)?.[1];
    if (code !== undefined && REASONS[code]) return REASONS[code];
  }
  return err instanceof Error ? err.message : String(err);
}

/** Runs `start` (one listener's start); its failure becomes listenFailure(address, setting, err). */
export async function listening<T>(address: string, setting: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    throw listenFailure(address, setting, err);
  }
}

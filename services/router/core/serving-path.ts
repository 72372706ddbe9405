// How a request was served, for its response headers (x-tessera-path, x-tessera-endpoints,
// server-timing), the router's metrics (tessera_router_serving_paths_total) and its logs. A model
// with prefill and decode endpoints serves a request disaggregated when it can; when it cannot, the
// request is a fallback to one worker and the reason says why, so a user can tell a disaggregated
// fleet that quietly runs colocated from one that works. A request resumed on another worker after
// its worker failed mid-stream is migrated, whatever it was before.
import { serverTiming } from "../../rpc/server-timing.ts";

/** colocated: the model has no prefill/decode endpoints; cached: answered from the response cache. */
export const SERVING_PATHS = ["colocated", "disaggregated", "fallback", "migrated", "cached"] as const;
export type ServingPathName = (typeof SERVING_PATHS)[number];

/**
 * Why a request of a disaggregated model ran whole on one worker:
 * - sampling: presence or frequency penalties count the output, which a decode worker would see as prompt;
 * - no_prefill_endpoint / no_decode_endpoint: no eligible (serving, not ejected) endpoint of that role;
 * - kv_unavailable: endpoints of both roles, but not both with a working KV tier (Redis down or hung);
 * - prefill_failed: every prefill endpoint failed before its token, a decode endpoint did it all;
 * - kv_write_failed: the prefill worker could not store the prompt's KV blocks, so it went on itself.
 */
export const FALLBACK_REASONS = [
  "sampling",
  "no_prefill_endpoint",
  "no_decode_endpoint",
  "kv_unavailable",
  "prefill_failed",
  "kv_write_failed",
] as const;
export type FallbackReason = (typeof FALLBACK_REASONS)[number];

/** What a worker did for the request: the segment it ran. */
export type ServedPart = "whole" | "prefill" | "decode" | "resumed";

export interface ServingPath {
  path: ServingPathName;
  /** Fallbacks: why; migrations: the path before the first migration. */
  reason?: FallbackReason | ServingPathName;
  /** Every worker that produced part of the output, in order. */
  endpoints: { name: string; part: ServedPart }[];
  /**
   * Milliseconds the workers said they served it (their server-timing), summed over the segments
   * that ended on them; 0 when none said.
   */
  workerMs: number;
}

/** x-tessera-path: `disaggregated`, `fallback:kv_unavailable`, `migrated:disaggregated`... */
export function pathHeader(served: ServingPath): string {
  return served.reason === undefined ? served.path : `${served.path}:${served.reason}`;
}

/**
 * server-timing: the workers' time on the request (when they said) and the router's whole time on it
 * since `started` (performance.now()), as `worker;dur=812.412, router;dur=815.900`.
 */
export function servingTiming(served: ServingPath, started: number): string {
  const router = performance.now() - started;
  return serverTiming(served.workerMs > 0 ? { worker: served.workerMs, router } : { router });
}

/** x-tessera-endpoints: `w0=prefill,w1=decode` (names are pod names or host:port). */
export function endpointsHeader(served: ServingPath): string {
  return served.endpoints.map((e) => `${e.name}=${e.part}`).join(",");
}

// The producer of a request's events: segments (continuation.ts) on endpoints the selector chooses.
// A colocated request is one whole segment; a disaggregated one is a prefill segment (one token, its
// KV blocks stored in the remote tier before it ends) then a continue segment on a decode endpoint,
// which reads those blocks instead of computing them. The client sees one stream.
//
// Failures: a segment that fails before its first message on an unwell endpoint (UNAVAILABLE,
// INTERNAL...) is retried on another endpoint of its pool, up to maxAttempts (with no prefill endpoint
// left, a decode endpoint does the whole generation). A segment whose endpoint
// fails after it streamed is migrated: a continue segment on another endpoint (one with a working KV
// tier when there is one), from the tokens already streamed, whose KV it reads back from the tier
// rather than recomputing it, up to maxMigrations times. Disaggregated requests always can; colocated
// ones when the failed endpoint had a working KV tier (it stored its blocks as it filled them). When a
// migration is not possible the stream ends with UNAVAILABLE, the tokens already sent standing. Other
// failures (the request's own fault, its deadline) end it as they are.
//
// A prefill worker that could not store the prompt's blocks (its Redis down or hung: the store's
// deadline passed once) says so in its final message; the rest then runs on that worker, which holds
// the blocks itself, rather than on a decode worker that would wait for Redis in turn. So a hung Redis
// costs a request at most one KV store deadline. How each request was served (serving-path.ts) is
// kept on the flight for the response headers and counted in the metrics.

import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import { AttemptError, attempt, isEndpointFailure } from "./attempt.ts";
import { Choices } from "./choices.ts";
import { resumable, type SegmentKind } from "./continuation.ts";
import {
  DECODE_POOL,
  type EndpointSelector,
  type PoolChoice,
  PREFILL_POOL,
  type Route,
  type Selection,
} from "./endpoint-selector.ts";
import type { Flight, Producer } from "./flight.ts";
import type { RouterEvent } from "./router-events.ts";
import type { PreparedRequest } from "./router-request.ts";
import type { ServedPart, ServingPath } from "./serving-path.ts";

export interface UpstreamOptions {
  selector: EndpointSelector;
  maxAttempts: number;
  maxMigrations: number;
  deadline: number | undefined;
  metrics: RouterMetrics | undefined;
  log: Logger;
}

interface Phase {
  kind: SegmentKind;
  pool: PoolChoice;
  /** The phase resumes a stream that failed mid-way. */
  migration: boolean;
  /** The phase must run on this endpoint (the prefill worker that kept the prompt's blocks itself). */
  pin?: Endpoint;
}

export function upstream(prepared: PreparedRequest, options: UpstreamOptions): Producer {
  const { requestId } = prepared.request;
  const model = prepared.model.id;
  const { selector, metrics, log } = options;
  return async (flight, signal) => {
    const output = new Choices(prepared);
    const split = resumable(prepared.sampling);
    const route = selector.route(model, split);
    const served = flight.served;
    Object.assign(served, initialPath(route));
    let phase = firstPhase(route);
    let tried = new Set<string>();
    let failed = 0;
    let migrations = 0;
    let last: TesseraError | undefined;
    /** Moves on to a continue segment after `from` (with a KV tier when picked: `kv`) failed mid-stream. */
    const migrate = (from: Endpoint, kv: boolean, error: TesseraError): boolean => {
      const pool = resumePool(route, kv);
      if (!split || pool === undefined || migrations >= options.maxMigrations) {
        metrics?.migration("not_resumable");
        return false;
      }
      migrations++;
      log.warn(
        {
          requestId,
          endpoint: from.name,
          role: from.role,
          tokens: output.generated.length,
          migration: migrations,
          err: error.message,
        },
        "endpoint failed mid-stream: resuming on another",
      );
      phase = { kind: "continue", pool, migration: true };
      if (served.path !== "migrated") Object.assign(served, { path: "migrated", reason: served.path });
      tried = new Set([from.name]);
      failed = 0;
      last = error;
      return true;
    };
    try {
      while (failed < options.maxAttempts) {
        // A pinned phase whose endpoint failed goes on elsewhere (recomputing: no blocks are expected).
        const selection =
          (phase.pin && pinned(phase.pin, tried)) ?? selector.select(prepared, tried, phase.pool);
        if (selection === undefined && phase.kind === "prefill") {
          // No prefill endpoint left to try: a decode endpoint can still do the whole generation.
          phase = { kind: "whole", pool: { role: "decode", kv: false }, migration: false };
          fellBack(served, "prefill_failed", log, requestId);
          continue;
        }
        if (selection === undefined) break;
        const { endpoint } = selection;
        const kv = endpoint.kvReady;
        tried.add(endpoint.name);
        if (failed > 0) metrics?.retried(model);
        let messages = 0;
        let writesFailed = false;
        const current = phase;
        const part = partOf(current);
        // Made once per attempt, not once per relayed message.
        const onEvent = (event: RouterEvent) => push(flight, endpoint, part, event);
        const onMessage = (message: Parameters<typeof output.accept>[0]) => {
          if (messages++ === 0 && current.migration) metrics?.migration("resumed");
          if (message.kvWritesFailed) writesFailed = true;
          output.emit(message, current.kind, onEvent);
          // The router ended the generation first (a stop string): the worker's call is cancelled.
          return output.done && message.finishReason === FinishReason.UNSPECIFIED;
        };
        try {
          const workerMs = await attempt(endpoint, model, output.segment(phase.kind), {
            requestId,
            priority: prepared.request.priority,
            deadline: options.deadline,
            signal,
            metrics,
            onMessage,
          });
          if (workerMs !== undefined) served.workerMs += workerMs;
          if (output.done) return;
          if (phase.kind !== "prefill" || messages === 0)
            throw new TesseraError(Code.INTERNAL, `${endpoint.name}: the stream ended without a finish`);
          phase = { kind: "continue", pool: DECODE_POOL, migration: false };
          if (writesFailed) {
            // The blocks are in this worker's cache only: it goes on itself.
            output.keepLocal();
            phase = {
              kind: "continue",
              pool: { role: "decode", kv: false },
              migration: false,
              pin: endpoint,
            };
            fellBack(served, "kv_write_failed", log, requestId, endpoint);
          }
          tried = new Set();
          failed = 0;
        } catch (err) {
          if (signal.aborted) throw signal.reason;
          const error = TesseraError.from(err);
          const streamed = err instanceof AttemptError ? err.messages : messages;
          if (streamed > 0) {
            // The request's own failure (its deadline...) ends it as it is. A call the router did not
            // cancel that ends CANCELLED: the worker's connection went away, as for an endpoint failure.
            if (!isEndpointFailure(error.code) && error.code !== Code.CANCELLED) throw error;
            if (migrate(endpoint, kv, error)) continue;
            throw new TesseraError(Code.UNAVAILABLE, `the endpoint failed mid-stream: ${error.message}`, {
              cause: error,
            });
          }
          if (!isEndpointFailure(error.code)) throw error;
          last = error;
          failed++;
          log.warn(
            {
              requestId,
              endpoint: endpoint.name,
              role: endpoint.role,
              segment: phase.kind,
              attempt: failed,
              err: error.message,
            },
            "attempt failed before its first token",
          );
        }
      }
      if (phase.migration) metrics?.migration("failed");
      const why = last
        ? `${tried.size} attempt(s) failed, the last with: ${last.message}`
        : "no eligible endpoint";
      throw new TesseraError(Code.UNAVAILABLE, `model "${model}": ${why}`, { cause: last });
    } finally {
      if (flight.started) metrics?.servingPath(model, served);
    }
  };
}

function push(
  flight: Flight,
  endpoint: Endpoint,
  part: ServedPart,
  event: Parameters<Flight["push"]>[0],
): void {
  if (!flight.started) flight.endpoint = endpoint.name;
  const { endpoints } = flight.served;
  const last = endpoints.at(-1);
  if (last?.name !== endpoint.name || last.part !== part) endpoints.push({ name: endpoint.name, part });
  flight.push(event);
}

/** The pinned endpoint, unless it was tried already (the attempt on it failed) or cannot take requests. */
function pinned(endpoint: Endpoint, tried: ReadonlySet<string>): Selection | undefined {
  return endpoint.eligible && !tried.has(endpoint.name)
    ? { endpoint, pick: { candidate: endpoint.candidate, scores: [], home: false } }
    : undefined;
}

function partOf(phase: Phase): ServedPart {
  if (phase.migration) return "resumed";
  if (phase.kind === "continue") return "decode";
  return phase.kind;
}

function initialPath(route: Route): Omit<ServingPath, "endpoints" | "workerMs"> {
  if (route.type === "disaggregated") return { path: "disaggregated" };
  return route.fallback ? { path: "fallback", reason: route.fallback } : { path: "colocated" };
}

/** A disaggregated request goes on on one worker; logged (the metric counts it when it ends). */
function fellBack(
  served: ServingPath,
  reason: "prefill_failed" | "kv_write_failed",
  log: Logger,
  requestId: string,
  endpoint?: Endpoint,
): void {
  served.path = "fallback";
  served.reason = reason;
  log.info(
    { requestId, reason, ...(endpoint && { endpoint: endpoint.name, role: endpoint.role }) },
    "disaggregated request falls back to one worker",
  );
}

function firstPhase(route: Route): Phase {
  if (route.type === "disaggregated") return { kind: "prefill", pool: PREFILL_POOL, migration: false };
  return { kind: "whole", pool: route.pool, migration: false };
}

/**
 * Where a stream can resume after its endpoint failed: disaggregated, on the decode endpoints;
 * colocated, on the same pool's endpoints when the failed one had a KV tier (`kv`: it stored the
 * blocks it filled as it went). Otherwise nowhere.
 */
function resumePool(route: Route, kv: boolean): PoolChoice | undefined {
  if (route.type === "disaggregated") return DECODE_POOL;
  return kv ? { role: route.pool.role, kv: true } : undefined;
}

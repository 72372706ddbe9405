// One attempt at one segment of a request on one endpoint: a generation with the segment's prompt
// as token ids (tokenized by the router, so the worker's prefix hashes are the ones the router routed
// by) over the endpoint's relay stream (or, where the worker has none, its own Generate call; a
// traced request's call span is made here and its context sent in the RelayOpen), its messages
// handed on from data callbacks (no promise per token). Keeps the endpoint's books: requests in
// flight, time to first token, outlier successes and failures.
import { create } from "@bufbuild/protobuf";
import type { ServiceError, StatusObject } from "@grpc/grpc-js";
import {
  type GenerateResponse,
  Inference,
  SamplingParamsSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import { structuredToMessage } from "../../inference/structured-output.ts";
import type { SamplingParams } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { grpcPath } from "../../rpc/grpc-service.ts";
import { startClientSpan } from "../../rpc/grpc-tracing.ts";
import { parseServerTiming, SERVER_TIMING } from "../../rpc/server-timing.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import { RelayUnsupportedError } from "../endpoints/relay-channel.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import type { SegmentRequest } from "./continuation.ts";

const GENERATE_PATH = grpcPath(Inference.method.generate);

/** Failures that say the endpoint is unwell (they count towards ejection and allow a retry). */
const ENDPOINT_FAILURES: ReadonlySet<Code> = new Set([
  Code.UNAVAILABLE,
  Code.INTERNAL,
  Code.UNKNOWN,
  Code.DATA_LOSS,
]);

export function isEndpointFailure(code: Code): boolean {
  return ENDPOINT_FAILURES.has(code);
}

export interface AttemptOptions {
  requestId: string;
  /** The workers schedule lower values first (RouterRequest.priority); unset: 0. */
  priority?: number | undefined;
  /** Milliseconds since the epoch. */
  deadline: number | undefined;
  signal: AbortSignal;
  metrics: RouterMetrics | undefined;
  /** Takes each message; returning true ends the attempt there (the call is cancelled). */
  onMessage: (message: GenerateResponse) => boolean;
}

/** An attempt's failure, with how many messages it had handed on before it. */
export class AttemptError extends TesseraError {
  readonly messages: number;

  constructor(error: TesseraError, messages: number) {
    super(error.code, error.message, { cause: error.cause });
    this.messages = messages;
  }
}

/**
 * Resolves when the endpoint ends the stream (or onMessage ended the attempt), with how long the
 * worker said it served the segment (ms; undefined when it did not say); rejects with an
 * AttemptError (or the signal's reason).
 */
export function attempt(
  endpoint: Endpoint,
  model: string,
  segment: SegmentRequest,
  options: AttemptOptions,
): Promise<number | undefined> {
  const { signal } = options;
  if (signal.aborted) return Promise.reject(signal.reason);
  const started = performance.now();
  let firstToken: number | undefined;
  let messages = 0;
  // Made where it is sent and not kept: the attempt lives as long as its generation, and what
  // outlives the router's young collections is what its full ones pay for (issue 22).
  const request = () => ({
    model,
    prompt: { case: "tokenIds" as const, value: { ids: segment.promptIds } },
    sampling: samplingMessage(segment.sampling),
    requestId: options.requestId,
    ...(options.priority !== undefined && { priority: options.priority }),
    ...(segment.kv && { kv: segment.kv }),
  });
  endpoint.inFlight++;
  return new Promise<number | undefined>((resolve, reject) => {
    let settled = false;
    let cancelUpstream = () => {};
    let timer: NodeJS.Timeout | undefined;
    /** Ends the relay generation's call span (a Generate call's span is grpc-js's interceptor's). */
    let traceEnd = (_code: Code, _message?: string) => {};
    const settle = (code: Code, error?: unknown, workerMs?: number) => {
      if (settled) return;
      settled = true;
      traceEnd(code, error instanceof Error ? error.message : undefined);
      endpoint.inFlight--;
      clearTimeout(timer);
      signal.removeEventListener("abort", cancel);
      const ms = performance.now() - started;
      options.metrics?.attempt(
        endpoint.name,
        code,
        ms / 1000,
        firstToken === undefined ? undefined : firstToken / 1000,
      );
      if (error === undefined) resolve(workerMs);
      else reject(error);
    };
    const cancel = () => {
      cancelUpstream();
      settle(Code.CANCELLED, signal.reason);
    };
    signal.addEventListener("abort", cancel, { once: true });
    const onMessage = (message: GenerateResponse) => {
      if (settled) return;
      if (firstToken === undefined) {
        firstToken = performance.now() - started;
        endpoint.ttft.record(firstToken);
        endpoint.outliers.recordSuccess();
      }
      messages++;
      try {
        if (!options.onMessage(message)) return;
        cancelUpstream();
        settle(Code.OK);
      } catch (err) {
        cancelUpstream();
        settle(Code.INTERNAL, err);
      }
    };
    const onError = (error: TesseraError) => {
      if (settled) return;
      if (isEndpointFailure(error.code)) endpoint.outliers.recordFailure();
      settle(error.code, new AttemptError(error, messages));
    };
    /** One Generate call for this request. */
    const call = () => {
      const stream = endpoint.client.serverStream(
        Inference.method.generate,
        request(),
        options.deadline === undefined ? {} : { deadline: options.deadline },
      );
      cancelUpstream = () => stream.cancel();
      stream.on("data", onMessage);
      // grpc-js emits the status (with the trailers) before "end".
      let workerMs: number | undefined;
      stream.on("status", (status: StatusObject) => {
        workerMs = parseServerTiming(String(status.metadata.get(SERVER_TIMING)[0] ?? ""))["worker"];
      });
      stream.on("end", () => settle(Code.OK, undefined, workerMs));
      stream.on("error", (err: ServiceError) => onError(fromGrpc(err, endpoint.name)));
    };
    const { relay } = endpoint;
    if (relay?.supported !== true) return call();
    // Over the endpoint's relay stream; the deadline is the router's to keep (the worker keeps it too).
    const traced = startClientSpan(GENERATE_PATH, options.requestId);
    traceEnd = (code, message) => traced?.end(code, message);
    cancelUpstream = relay.open(
      request(),
      options.deadline,
      {
        message: onMessage,
        end: (error, workerMs) => {
          if (error instanceof RelayUnsupportedError) {
            traced?.end(error.code, error.message);
            call();
          } else if (error) onError(error);
          else settle(Code.OK, undefined, workerMs);
        },
      },
      traced?.carrier,
    );
    if (options.deadline !== undefined)
      timer = setTimeout(
        () => {
          cancelUpstream();
          onError(
            new TesseraError(Code.DEADLINE_EXCEEDED, `${endpoint.name}: the request's deadline passed`),
          );
        },
        Math.max(0, options.deadline - Date.now()),
      );
  });
}

/** The validated parameters as the proto message (every field explicit, so the worker applies no default). */
export function samplingMessage(s: SamplingParams) {
  const {
    seed,
    structured,
    structuredMatchedTokens,
    logitBias,
    promptLogprobs,
    n,
    bestOf,
    echo,
    skipSpecialTokens,
    ...rest
  } = s;
  return create(SamplingParamsSchema, {
    ...rest,
    ...(seed === undefined ? {} : { seed }),
    ...(structured && { structured: structuredToMessage(structured, structuredMatchedTokens) }),
    ...(logitBias && { logitBias: Object.fromEntries(logitBias) }),
    ...(promptLogprobs !== undefined && { promptLogprobs }),
    ...(n !== undefined && { n }),
    ...(bestOf !== undefined && { bestOf }),
    // echo and skip_special_tokens are the router's: it writes the text itself (choices.ts, detokenizer.ts).
  });
}

function fromGrpc(err: ServiceError, endpoint: string): TesseraError {
  if (typeof err.code !== "number") return TesseraError.from(err);
  return new TesseraError(err.code, `${endpoint}: ${err.details || err.message || "failed"}`, { cause: err });
}

// The router's tessera.v1.Inference service: the same contract as a worker's, so a client cannot
// tell them apart. Generate streams what the router core produces (the serving endpoint and cache use
// are sent as x-tessera-endpoint / x-tessera-cache metadata); Tokenize and ListModels are answered
// by the router itself.
import { create, fromBinary } from "@bufbuild/protobuf";
import { Metadata, type ServerUnaryCall, type sendUnaryData } from "@grpc/grpc-js";
import { context } from "@opentelemetry/api";
import {
  FinishReason,
  GenerateRequestSchema,
  type GenerateResponse,
  type Inference,
  ListModelsResponseSchema,
  TokenizeResponseSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { GrpcHandlers } from "../../rpc/grpc-service.ts";
import { extractFromMetadata, startServerSpan } from "../../rpc/grpc-tracing.ts";
import { type CallHandler, Http2ServerCall } from "../../rpc/http2-server-call.ts";
import { CANCELLED_BY_CLIENT, type InFlight } from "../../rpc/in-flight.ts";
import { SERVER_TIMING } from "../../rpc/server-timing.ts";
import { statusDetails } from "../../rpc/status-details.ts";
import { framedGenerateResponse } from "../../rpc/stream-codecs.ts";
import type { Router } from "../core/router.ts";
import type { RouterEvent } from "../core/router-events.ts";
import type { RouterRequest } from "../core/router-request.ts";
import { endpointsHeader, pathHeader, servingTiming } from "../core/serving-path.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import { fromGrpc } from "./grpc-request.ts";

type InferenceMethods = typeof Inference extends { method: infer M } ? M : never;

/** Tokenize and ListModels, served by grpc-js; Generate has its own stream handler (below). */
export function routerInferenceHandlers(
  router: Router,
  inFlight: InFlight,
): Omit<GrpcHandlers<InferenceMethods>, "generate"> {
  return {
    tokenize: (call, callback) =>
      unary(call, callback, inFlight, (request) => {
        const model = router.models.resolve(request.model);
        if (model.error) throw model.error;
        const { tokenizer } = model.value;
        const tokenIds = tokenizer.encode(request.text, { addSpecialTokens: request.addSpecialTokens });
        return create(TokenizeResponseSchema, {
          tokenIds,
          tokens: tokenIds.map((id) => tokenizer.decode([id])),
        });
      }),
    listModels: (call, callback) =>
      unary(call, callback, inFlight, () =>
        create(ListModelsResponseSchema, {
          models: router.models.models.map(({ id, info }) => ({
            id,
            ...(info && {
              architecture: info.architecture,
              maxContext: info.maxContext,
              vocabSize: info.vocabSize,
              dtype: info.dtype,
              revision: info.revision,
              kvBlockSize: info.blockSize,
              eosTokenIds: [...info.eosTokenIds],
            }),
          })),
        }),
      ),
  };
}

/**
 * Generate, served on the front door's HTTP/2 stream (rpc/h2/h2-front-door.ts): each call read by
 * Http2ServerCall, run inside a SERVER span when tracing is on (as traceHandlers runs the other
 * methods).
 */
export function generateStreamHandler(
  router: Router,
  inFlight: InFlight,
  log: Logger,
  metrics: RouterMetrics | undefined,
  options: { maxRequestBytes: number; tracing: boolean },
): CallHandler {
  return (stream, headers, path) =>
    Http2ServerCall.serve(
      stream,
      headers,
      path,
      GENERATE_REQUEST,
      options.maxRequestBytes,
      (call, message) => {
        // The call's metadata is read now, and the decoded message is not handed on: generate()
        // lives as long as the generation, and V8 keeps an async function's arguments for all of it.
        const request = fromGrpc(message, call, call.deadline, router.sessionHeader);
        if (!options.tracing) {
          void generate(call, request, message.model, router, inFlight, log, metrics);
          return;
        }
        const served = startServerSpan(
          "router",
          call.path,
          extractFromMetadata(call.metadata),
          message.requestId,
        );
        void context.with(served.context, () =>
          generate(call, request, message.model, router, inFlight, log, metrics, (code, details) =>
            served.end(code, details),
          ),
        );
      },
    );
}

const GENERATE_REQUEST = {
  typeName: GenerateRequestSchema.typeName,
  decode: (bytes: Uint8Array) => fromBinary(GenerateRequestSchema, bytes),
};

async function generate(
  call: Http2ServerCall,
  request: Result<RouterRequest>,
  requestedModel: string,
  router: Router,
  inFlight: InFlight,
  log: Logger,
  metrics: RouterMetrics | undefined,
  ended?: (code: Code, message?: string) => void,
) {
  const started = performance.now();
  const controller = inFlight.begin();
  let code: Code = Code.OK;
  let details: string | undefined;
  let model = requestedModel;
  if (controller) call.abortOnCancel(controller);
  try {
    if (controller === undefined) throw new TesseraError(Code.UNAVAILABLE, "the router is shutting down");
    if (request.error) throw request.error;
    const generation = await router.generate(request.value, controller.signal);
    model = generation.model;
    call.sendHeaders({ "x-tessera-endpoint": generation.endpoint, "x-tessera-cache": generation.cache });
    // Messages go out as they come: the stream buffers them for a slow reader (a generation is
    // bounded by max_tokens), which keeps the relay free of a promise per token.
    const { requestId } = request.value;
    await generation.read((event) => {
      call.write(framedGenerateResponse(toResponse(event, requestId)));
    });
    if (call.cancelled) throw controller.signal.reason ?? CANCELLED_BY_CLIENT;
    // Every worker that served part of it is known only now, and how long they took: trailing metadata.
    const { served } = generation;
    call.end(Code.OK, "", {
      "x-tessera-path": pathHeader(served),
      "x-tessera-endpoints": endpointsHeader(served),
      [SERVER_TIMING]: servingTiming(served, started),
    });
    await call.closed(controller.signal);
  } catch (err) {
    const error = TesseraError.from(controller?.signal.aborted ? controller.signal.reason : err);
    code = error.code;
    details = error.message;
    if (call.cancelled) code = Code.CANCELLED;
    else {
      if (error.code !== Code.INVALID_ARGUMENT && error.code !== Code.NOT_FOUND)
        log.warn({ code: Code[error.code], err: error.message }, "generate failed");
      call.end(error.code, error.message, retryPushback(error));
    }
  } finally {
    if (controller) inFlight.end(controller);
    ended?.(code, details);
    metrics?.finished(model || "", "grpc", code, (performance.now() - started) / 1000);
  }
}

/** One message per token: a plain message object (every field given), without create()'s reflection. */
function toResponse(event: RouterEvent, requestId: string): GenerateResponse {
  if (event.type === "tokens")
    return {
      $typeName: "tessera.v1.GenerateResponse",
      requestId,
      tokens: event.tokens,
      textDelta: event.text,
      finishReason: FinishReason.UNSPECIFIED,
      kvWritesFailed: false,
      index: event.index ?? 0,
      promptLogprobs: event.promptTokens ?? [],
    };
  const { promptTokens, completionTokens } = event.usage;
  return {
    $typeName: "tessera.v1.GenerateResponse",
    requestId,
    tokens: [],
    textDelta: event.text,
    index: event.index ?? 0,
    promptLogprobs: [],
    finishReason: event.reason,
    kvWritesFailed: false,
    usage: {
      $typeName: "tessera.v1.Usage",
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
    },
  };
}

/** A gRPC status; a retry hint travels as grpc-retry-pushback-ms, as gRPC's retry policies read it. */
export function toStatus(error: TesseraError): { code: Code; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(retryPushback(error) ?? {})) metadata.set(key, value);
  return { code: error.code, details: statusDetails(error.message), metadata };
}

function retryPushback(error: TesseraError): Record<string, string> | undefined {
  return error.retryAfterMs === undefined
    ? undefined
    : { "grpc-retry-pushback-ms": String(error.retryAfterMs) };
}

function unary<Req, Res>(
  call: ServerUnaryCall<Req, Res>,
  callback: sendUnaryData<Res>,
  inFlight: InFlight,
  answer: (request: Req) => Res,
): void {
  const controller = inFlight.begin();
  try {
    if (controller === undefined) throw new TesseraError(Code.UNAVAILABLE, "the router is shutting down");
    callback(null, answer(call.request));
  } catch (err) {
    callback(toStatus(TesseraError.from(err)));
  } finally {
    if (controller) inFlight.end(controller);
  }
}

// The router's tessera.v1.Inference service: the same contract as a worker's, so a client cannot
// tell them apart. Generate streams what the router core produces (the serving endpoint and cache use
// are sent as x-tessera-endpoint / x-tessera-cache metadata); Tokenize and ListModels are answered
// by the router itself.
import { once } from "node:events";
import { create } from "@bufbuild/protobuf";
import { Metadata, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from "@grpc/grpc-js";
import {
  FinishReason,
  type GenerateRequest,
  type GenerateResponse,
  type Inference,
  ListModelsResponseSchema,
  TokenizeResponseSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { GrpcHandlers } from "../../rpc/grpc-service.ts";
import { CANCELLED_BY_CLIENT, type InFlight } from "../../rpc/in-flight.ts";
import { statusDetails } from "../../rpc/status-details.ts";
import type { Router } from "../core/router.ts";
import type { RouterEvent } from "../core/router-events.ts";
import { endpointsHeader, pathHeader } from "../core/serving-path.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import { fromGrpc } from "./grpc-request.ts";

type InferenceMethods = typeof Inference extends { method: infer M } ? M : never;
type GenerateCall = ServerWritableStream<GenerateRequest, GenerateResponse>;

export function routerInferenceHandlers(
  router: Router,
  inFlight: InFlight,
  log: Logger,
  metrics: RouterMetrics | undefined,
): GrpcHandlers<InferenceMethods> {
  return {
    generate: (call) => void generate(call, router, inFlight, log, metrics),
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

async function generate(
  call: GenerateCall,
  router: Router,
  inFlight: InFlight,
  log: Logger,
  metrics: RouterMetrics | undefined,
) {
  const started = performance.now();
  const controller = inFlight.begin();
  let code: Code = Code.OK;
  let model = call.request.model;
  const onCancelled = () => controller?.abort(CANCELLED_BY_CLIENT);
  call.on("cancelled", onCancelled);
  try {
    if (controller === undefined) throw new TesseraError(Code.UNAVAILABLE, "the router is shutting down");
    const request = fromGrpc(call.request, call.metadata, call.getDeadline(), router.sessionHeader);
    if (request.error) throw request.error;
    const generation = await router.generate(request.value, controller.signal);
    model = generation.model;
    const metadata = new Metadata();
    metadata.set("x-tessera-endpoint", generation.endpoint);
    metadata.set("x-tessera-cache", generation.cache);
    call.sendMetadata(metadata);
    // Messages go out as they come: the transport buffers them for a slow reader (a generation is
    // bounded by max_tokens), which keeps the relay free of a promise per token.
    const { requestId } = request.value;
    await generation.read((event) => {
      call.write(toResponse(event, requestId));
    });
    // Every worker that served part of it is known only now: trailing metadata.
    const trailer = new Metadata();
    trailer.set("x-tessera-path", pathHeader(generation.served));
    trailer.set("x-tessera-endpoints", endpointsHeader(generation.served));
    call.end(trailer);
    await once(call, "finish", { signal: controller.signal }).catch(() => {});
  } catch (err) {
    const error = TesseraError.from(controller?.signal.aborted ? controller.signal.reason : err);
    code = error.code;
    if (call.cancelled) code = Code.CANCELLED;
    else {
      if (error.code !== Code.INVALID_ARGUMENT && error.code !== Code.NOT_FOUND)
        log.warn({ code: Code[error.code], err: error.message }, "generate failed");
      call.emit("error", toStatus(error));
    }
  } finally {
    call.off("cancelled", onCancelled);
    if (controller) inFlight.end(controller);
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
  if (error.retryAfterMs !== undefined) metadata.set("grpc-retry-pushback-ms", String(error.retryAfterMs));
  return { code: error.code, details: statusDetails(error.message), metadata };
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

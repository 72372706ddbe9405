// The tessera.v1.Inference service: Generate streams one message per engine event, Tokenize and
// ListModels answer from the loaded model. Every failure becomes a gRPC status; none crashes the server.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { create } from "@bufbuild/protobuf";
import { Metadata, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from "@grpc/grpc-js";
import {
  type GenerateRequest,
  type GenerateResponse,
  type Inference,
  ListModelsResponseSchema,
  type TokenizeRequest,
  type TokenizeResponse,
  TokenizeResponseSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import { resolveModel, toEngineRequest } from "../../inference/generate-request.ts";
import type { ServedModel, ServedModelInfo } from "../../inference/served-model.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { phaseSpans } from "../../kernel/telemetry/phase-spans.ts";
import type { GrpcHandlers } from "../../rpc/grpc-service.ts";
import { CANCELLED_BY_CLIENT, type InFlight } from "../../rpc/in-flight.ts";
import { SERVER_TIMING, serverTiming } from "../../rpc/server-timing.ts";
import { statusDetails } from "../../rpc/status-details.ts";
import { toGenerateResponse } from "./generate-response.ts";
import type { RpcMetrics } from "./rpc-metrics.ts";

/**
 * The reason a call's work is aborted when grpc-js reports it cancelled, which it also does after
 * every call that ended normally: one shared error rather than a stack trace captured per request.
 */

type InferenceMethods = typeof Inference extends { method: infer M } ? M : never;
type GenerateCall = ServerWritableStream<GenerateRequest, GenerateResponse>;

export class InferenceService {
  readonly #model: ServedModel;
  readonly #inFlight: InFlight;
  readonly #log: Logger;
  readonly #metrics: RpcMetrics | undefined;
  readonly #info: ServedModelInfo | undefined;

  constructor(
    model: ServedModel,
    inFlight: InFlight,
    log: Logger,
    metrics?: RpcMetrics,
    info?: ServedModelInfo,
  ) {
    this.#model = model;
    this.#inFlight = inFlight;
    this.#log = log;
    this.#metrics = metrics;
    this.#info = info;
  }

  handlers(): GrpcHandlers<InferenceMethods> {
    return {
      generate: (call) => void this.generate(call),
      tokenize: (call, callback) =>
        this.#unary("Tokenize", call, callback, (request) => this.tokenize(request)),
      listModels: (call, callback) => this.#unary("ListModels", call, callback, () => this.listModels()),
    };
  }

  async generate(call: GenerateCall): Promise<void> {
    await this.serveGeneration(
      call.request.requestId,
      {},
      {
        run: async (controller, requestId, log, started) => {
          const onCancelled = () => controller.abort(CANCELLED_BY_CLIENT);
          call.on("cancelled", onCancelled);
          try {
            return await this.#stream(call, requestId, controller.signal, log, started);
          } finally {
            call.off("cancelled", onCancelled);
          }
        },
        failed: (error, log) => {
          if (call.cancelled) {
            log.info("generate cancelled by the client");
            return Code.CANCELLED;
          }
          log.warn({ code: error.code, err: error.message }, "generate failed");
          // Unless the call has already ended (then its status is on its way).
          if (!call.writableEnded) call.emit("error", toStatus(error));
          return error.code;
        },
      },
    );
  }

  /**
   * One generation's lifecycle, the same for a Generate call and for each generation of a Relay
   * stream: a place in the in-flight set (a drain waits for it; UNAVAILABLE once draining), the
   * request id (the caller's, else a new one), its log, and its status counted in the RPC metrics.
   * `run` is handed when the generation arrived (performance.now()) and resolves with the status (OK, or CANCELLED when its reader went away); what it throws (the
   * abort's reason once the signal aborted) goes to `failed`, which ends the call with it and answers
   * the status to count.
   */
  async serveGeneration(
    requested: string,
    logFields: Record<string, unknown>,
    hooks: {
      run(controller: AbortController, requestId: string, log: Logger, started: number): Promise<Code>;
      failed(error: TesseraError, log: Logger): Code;
    },
  ): Promise<void> {
    const started = performance.now();
    const requestId = requested || randomUUID();
    const log = this.#log.child({ requestId, method: "Generate", ...logFields });
    const controller = this.#inFlight.begin();
    if (controller === undefined) {
      this.#finished("Generate", hooks.failed(unavailable(), log), started);
      return;
    }
    let code: Code = Code.OK;
    try {
      code = await hooks.run(controller, requestId, log, started);
    } catch (err) {
      code = hooks.failed(TesseraError.from(controller.signal.aborted ? controller.signal.reason : err), log);
    } finally {
      this.#inFlight.end(controller);
      this.#finished("Generate", code, started);
    }
  }

  /**
   * Writes one message per engine event, then ends the call, its server-timing trailer saying how
   * long the worker served it since `started`, and waits until the transport has taken every message
   * (a slow reader holds the call in flight). Returns OK, or CANCELLED when the client went away
   * before the end; throws what the call should fail with.
   */
  async #stream(
    call: GenerateCall,
    requestId: string,
    signal: AbortSignal,
    log: Logger,
    started: number,
  ): Promise<Code> {
    const completed = await this.run(call.request, requestId, signal, log, async (message) => {
      if (call.cancelled) return false;
      await write(call, message, signal);
      return true;
    });
    if (!completed || call.cancelled) return Code.CANCELLED;
    const trailers = new Metadata();
    trailers.set(SERVER_TIMING, serverTiming({ worker: performance.now() - started }));
    call.end(trailers);
    // Stop waiting when the signal aborts: the drain timed out, or grpc-js reported "cancelled" (which
    // it also does once the status has been sent).
    await once(call, "finish", { signal }).catch(() => {});
    return Code.OK;
  }

  /**
   * Runs one generation, handing `send` one message per engine event (Generate's call, or a Relay
   * stream); `send` answers false to stop reading (its reader went away), and run then answers false.
   * Throws what the generation fails with.
   */
  async run(
    message: GenerateRequest,
    requestId: string,
    signal: AbortSignal,
    log: Logger,
    send: (message: GenerateResponse) => boolean | Promise<boolean>,
  ): Promise<boolean> {
    const request = toEngineRequest(message, this.#model, requestId, this.#info?.samplingDefaults);
    if (request.error) throw request.error;
    const trace = phaseSpans(requestId);
    if (trace) request.value.trace = trace;
    log.info({ promptTokens: request.value.promptIds.length }, "generate started");
    const started = performance.now();
    let tokens = 0;
    // echo: the prompt's text (as given, or its tokens decoded) opens each sequence's text.
    const echo = request.value.sampling.echo
      ? message.prompt.case === "text"
        ? message.prompt.value
        : this.#model.tokenizer.decode(request.value.promptIds)
      : undefined;
    const echoed = new Set<number>();
    for await (const generated of this.#model.generate(request.value, signal)) {
      let event = generated;
      if (echo !== undefined && !echoed.has(event.index ?? 0)) {
        echoed.add(event.index ?? 0);
        event = { ...event, textDelta: echo + event.textDelta };
      }
      if (event.type === "tokens") {
        if (tokens === 0) this.#metrics?.firstToken((performance.now() - started) / 1000);
        tokens += event.tokens.length;
        this.#metrics?.tokens(event.tokens.length);
      }
      // A Relay stream's send answers at once: no await (a microtask per token) for it.
      const sent = send(toGenerateResponse(event, requestId, this.#model.tokenizer));
      if (!(typeof sent === "boolean" ? sent : await sent)) return false;
      if (event.type === "finish")
        log.info({ reason: event.reason, usage: event.usage }, "generate finished");
    }
    return true;
  }

  tokenize(request: TokenizeRequest): TokenizeResponse {
    const resolved = resolveModel(request.model, this.#model);
    if (resolved.error) throw resolved.error;
    const { tokenizer } = this.#model;
    const tokenIds = tokenizer.encode(request.text, { addSpecialTokens: request.addSpecialTokens });
    return create(TokenizeResponseSchema, { tokenIds, tokens: tokenIds.map((id) => tokenizer.decode([id])) });
  }

  listModels() {
    const { id, architecture, maxContext, vocabSize, dtype } = this.#model.description;
    const info = this.#info && { ...this.#info, eosTokenIds: [...this.#info.eosTokenIds] };
    return create(ListModelsResponseSchema, {
      models: [{ id, architecture, maxContext, vocabSize, dtype, ...info }],
    });
  }

  #unary<Req, Res>(
    method: string,
    call: ServerUnaryCall<Req, Res>,
    callback: sendUnaryData<Res>,
    answer: (request: Req) => Res,
  ): void {
    const started = performance.now();
    const controller = this.#inFlight.begin();
    let code: Code = Code.OK;
    try {
      if (controller === undefined) throw unavailable();
      callback(null, answer(call.request));
    } catch (err) {
      const error = TesseraError.from(err);
      code = error.code;
      callback(toStatus(error));
    } finally {
      if (controller) this.#inFlight.end(controller);
      this.#finished(method, code, started);
    }
  }

  #finished(method: string, code: Code, started: number): void {
    this.#metrics?.finished(method, code, (performance.now() - started) / 1000);
  }
}

function unavailable(): TesseraError {
  return new TesseraError(Code.UNAVAILABLE, "the server is shutting down");
}

function toStatus(error: TesseraError): { code: Code; details: string } {
  return { code: error.code, details: statusDetails(error.message) };
}

/** Writes one message, waiting while the client is slower than the engine (until aborted). */
async function write(call: GenerateCall, message: GenerateResponse, signal: AbortSignal): Promise<void> {
  if (!call.write(message)) await once(call, "drain", { signal });
}

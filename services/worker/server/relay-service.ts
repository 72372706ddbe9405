// The tessera.v1.Relay service: many generations over one stream from a router. Each RelayOpen runs
// the same generation an Inference.Generate call would, with the same lifecycle
// (InferenceService.serveGeneration: in-flight set, request id, logs, metrics) and run; its
// messages become frames, and the frames of all generations produced in one turn of the event loop
// (one engine step hands every running request its tokens in one turn) leave as one RelayGenerateResponse.
// With tracing on, each generation runs in a SERVER span named as a Generate call's, child of the
// trace context its RelayOpen carries.
import { create } from "@bufbuild/protobuf";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { context } from "@opentelemetry/api";
import {
  type GenerateRequest,
  type GenerateResponse,
  Inference,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import {
  type Relay,
  type RelayFrame,
  type RelayGenerateRequest,
  type RelayGenerateResponse,
  RelayGenerateResponseSchema,
} from "../../../proto/gen/tessera/v1/relay_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { tracingEnabled } from "../../kernel/telemetry/tracing.ts";
import { type GrpcHandlers, grpcPath } from "../../rpc/grpc-service.ts";
import { extractFromCarrier, startServerSpan } from "../../rpc/grpc-tracing.ts";
import type { InFlight } from "../../rpc/in-flight.ts";
import type { InferenceService } from "./inference-service.ts";

type RelayMethods = typeof Relay extends { method: infer M } ? M : never;
const GENERATE_PATH = grpcPath(Inference.method.generate);
type RelayCall = ServerDuplexStream<RelayGenerateRequest, RelayGenerateResponse>;

export class RelayService {
  readonly #inference: InferenceService;
  readonly #inFlight: InFlight;
  readonly #streams = new Set<RelayStream>();

  /** `inference` runs each generation (its lifecycle, logs and metrics are Generate's). */
  constructor(inference: InferenceService, inFlight: InFlight) {
    this.#inference = inference;
    this.#inFlight = inFlight;
  }

  handlers(): GrpcHandlers<RelayMethods> {
    return {
      generate: (call) => {
        const stream = new RelayStream(call, this.#inference, this.#inFlight);
        this.#streams.add(stream);
        stream.closed.then(() => this.#streams.delete(stream));
      },
    };
  }

  /** Ends every relay stream that has no generation left (the server is going down). */
  endIdle(): void {
    for (const stream of this.#streams) stream.endIfIdle();
  }
}

class RelayStream {
  readonly closed: Promise<void>;
  readonly #call: RelayCall;
  readonly #inference: InferenceService;
  readonly #inFlight: InFlight;
  /** The generations running on this stream, by stream id. */
  readonly #running = new Map<bigint, AbortController>();
  #frames: RelayFrame[] = [];
  #scheduled = false;
  /** The transport is full: frames wait for its "drain". */
  #blocked = false;
  #ended = false;

  constructor(call: RelayCall, inference: InferenceService, inFlight: InFlight) {
    this.#call = call;
    this.#inference = inference;
    this.#inFlight = inFlight;
    let close = () => {};
    this.closed = new Promise((resolve) => {
      close = resolve;
    });
    const gone = () => {
      this.#ended = true;
      for (const controller of this.#running.values())
        controller.abort(new TesseraError(Code.CANCELLED, "the relay stream ended"));
      close();
    };
    call.on("data", (request: RelayGenerateRequest) => this.#receive(request));
    call.on("cancelled", gone);
    call.on("error", gone);
    call.on("close", gone);
    // The router half-closed: the generations still running finish, then the stream ends.
    call.on("end", () => this.endIfIdle());
  }

  endIfIdle(): void {
    if (this.#running.size > 0 || this.#ended) return;
    this.#ended = true;
    this.#flush(true);
    this.#call.end();
  }

  #receive(request: RelayGenerateRequest): void {
    const { kind } = request;
    if (kind.case === "open") {
      const { streamId, request: message, deadlineUnixMs } = kind.value;
      if (this.#running.has(streamId)) {
        this.#end(streamId, new TesseraError(Code.INVALID_ARGUMENT, `stream_id ${streamId} is already open`));
        return;
      }
      void this.#generate(streamId, message, Number(deadlineUnixMs), kind.value.traceContext);
    } else if (kind.case === "cancel") {
      this.#running
        .get(kind.value.streamId)
        ?.abort(new TesseraError(Code.CANCELLED, "cancelled by the router"));
    }
  }

  async #generate(
    streamId: bigint,
    message: GenerateRequest | undefined,
    deadline: number,
    traceContext: Record<string, string>,
  ): Promise<void> {
    await this.#inference.serveGeneration(
      message?.requestId ?? "",
      { relay: true },
      {
        run: async (controller, requestId, log, started) => {
          this.#running.set(streamId, controller);
          // Traced as a Generate call would be (traceHandlers), under the router's call span it carries.
          const traced = tracingEnabled()
            ? startServerSpan("worker", GENERATE_PATH, extractFromCarrier(traceContext), requestId)
            : undefined;
          const timer =
            deadline > 0
              ? setTimeout(
                  () =>
                    controller.abort(
                      new TesseraError(Code.DEADLINE_EXCEEDED, "the request's deadline passed"),
                    ),
                  Math.max(0, deadline - Date.now()),
                )
              : undefined;
          try {
            if (message === undefined) throw new TesseraError(Code.INVALID_ARGUMENT, "request: missing");
            const run = () =>
              this.#inference.run(message, requestId, controller.signal, log, (response) => {
                this.#push(frame(streamId, response));
                return true;
              });
            await (traced ? context.with(traced.context, run) : run());
            // An aborted generation may end with a "cancelled" finish: it still ends with the abort's status.
            if (controller.signal.aborted) throw controller.signal.reason;
            traced?.end(Code.OK);
            this.#end(streamId, undefined, performance.now() - started);
            return Code.OK;
          } catch (err) {
            const error = TesseraError.from(controller.signal.aborted ? controller.signal.reason : err);
            traced?.end(error.code, error.message);
            throw error;
          } finally {
            clearTimeout(timer);
            this.#running.delete(streamId);
          }
        },
        failed: (error, log) => {
          if (error.code === Code.CANCELLED) log.info("generate cancelled by the router");
          else log.warn({ code: error.code, err: error.message }, "generate failed");
          this.#end(streamId, error);
          return error.code;
        },
      },
    );
    if (this.#inFlight.draining) this.endIfIdle();
  }

  /** The generation's end frame: OK with how long the worker served it (ms), or its error. */
  #end(streamId: bigint, error?: TesseraError, workerMs = 0): void {
    this.#push(frame(streamId, undefined, error?.code ?? Code.OK, error?.message ?? "", workerMs));
  }

  #push(frame: RelayFrame): void {
    if (this.#ended) return;
    this.#frames.push(frame);
    if (this.#scheduled || this.#blocked) return;
    // After the microtasks now queued: the events of one engine step reach every generation's
    // loop within them, so their frames leave together, without waiting for another event-loop turn.
    this.#scheduled = true;
    process.nextTick(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  /**
   * Sends the frames gathered so far as one message. A full transport (a slow router) holds them
   * until it drains (they stay bounded by max_tokens of the generations on this stream); the `last`
   * message goes out regardless, before the stream ends.
   */
  #flush(last = false): void {
    if (this.#frames.length === 0 || (this.#blocked && !last) || this.#call.writableEnded) return;
    const frames = this.#frames;
    this.#frames = [];
    if (this.#call.write(create(RelayGenerateResponseSchema, { frames })) || last) return;
    this.#blocked = true;
    this.#call.once("drain", () => {
      this.#blocked = false;
      this.#flush();
    });
  }
}

/**
 * A frame as a plain message object: one per token of every generation, so it skips create()'s
 * reflective defaults (every field is given here). Its message goes without the request id and the
 * text (relay.proto): the router detokenizes itself, and decoding strings per token only to drop them
 * was ~100 of the ~3,250 bytes it allocated per relayed token.
 */
function frame(
  streamId: bigint,
  response: GenerateResponse | undefined,
  status = 0,
  statusMessage = "",
  workerMs = 0,
): RelayFrame {
  return {
    $typeName: "tessera.v1.RelayFrame",
    streamId,
    ...(response && { response: { ...response, requestId: "", textDelta: "" } }),
    end: response === undefined,
    status,
    statusMessage,
    workerMs,
  };
}

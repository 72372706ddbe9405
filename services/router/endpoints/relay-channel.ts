// The router's end of one worker's tessera.v1.Relay stream: the generations this router runs on the
// worker share one bidirectional stream, opened on first use and again after it ends. The worker
// batches the frames of one engine step into one message, so relaying N streams costs the router one
// receive per step instead of N (see proto/tessera/v1/relay.proto). A worker without the Relay
// service answers UNIMPLEMENTED once; the channel then reports `supported` false and callers go
// back to one Generate call per request. A request that protobuf cannot encode fails alone, before it
// reaches the shared stream.
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import type { ClientDuplexStream, ServiceError } from "@grpc/grpc-js";
import { context, ROOT_CONTEXT } from "@opentelemetry/api";
import type { GenerateRequestSchema, GenerateResponse } from "../../../proto/gen/tessera/v1/inference_pb.js";
import {
  Relay,
  RelayGenerateRequestSchema,
  type RelayGenerateResponse,
} from "../../../proto/gen/tessera/v1/relay_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { GrpcClient } from "../../rpc/grpc-client.ts";

export interface RelayHandlers {
  message(message: GenerateResponse): void;
  /**
   * The generation ended: OK (no error, with how long the worker served it in ms, when it said), or
   * failed. Called once, and nothing after it.
   */
  end(error: TesseraError | undefined, workerMs?: number): void;
}

/** Ends a generation whose endpoint turned out not to have the Relay service: nothing was sent. */
export class RelayUnsupportedError extends TesseraError {
  constructor(endpoint: string) {
    super(Code.UNIMPLEMENTED, `${endpoint}: no tessera.v1.Relay service`);
  }
}

export class RelayChannel {
  readonly #name: string;
  readonly #client: GrpcClient;
  readonly #open = new Map<bigint, RelayHandlers>();
  #call: ClientDuplexStream<Uint8Array, RelayGenerateResponse> | undefined;
  #nextId = 1n;
  #supported = true;

  constructor(name: string, client: GrpcClient) {
    this.#name = name;
    this.#client = client;
  }

  /** False once the endpoint answered that it has no Relay service. */
  get supported(): boolean {
    return this.#supported;
  }

  /** Generations running on the channel. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Starts a generation; its messages and end go to `handlers`; `traceContext` is the W3C context of
   * its call's span when traced. Returns its cancel: the worker is told to stop, and no handler is
   * called after it.
   */
  open(
    request: MessageInitShape<typeof GenerateRequestSchema>,
    deadline: number | undefined,
    handlers: RelayHandlers,
    traceContext: Record<string, string> = {},
  ): () => void {
    const streamId = this.#nextId++;
    const open = { streamId, request, deadlineUnixMs: BigInt(deadline ?? 0), traceContext };
    const bytes = encoded({ kind: { case: "open", value: open } });
    if (bytes instanceof TesseraError) {
      queueMicrotask(() => handlers.end(bytes));
      return () => {};
    }
    const call = this.#stream();
    this.#open.set(streamId, handlers);
    call.write(bytes);
    return () => {
      if (!this.#open.delete(streamId) || this.#call !== call) return;
      const cancel = create(RelayGenerateRequestSchema, { kind: { case: "cancel", value: { streamId } } });
      call.write(toBinary(RelayGenerateRequestSchema, cancel));
    };
  }

  /** Ends the stream; the generations still on it fail with UNAVAILABLE. */
  close(): void {
    this.#call?.cancel();
  }

  #stream(): ClientDuplexStream<Uint8Array, RelayGenerateResponse> {
    if (this.#call) return this.#call;
    // The stream outlives the request that happens to open it: opened outside any trace, so the
    // tracing interceptor gives it no span in that request's trace (each generation has its own).
    const call = context.with(ROOT_CONTEXT, () => this.#client.bidiStream(Relay.method.generate));
    this.#call = call;
    call.on("data", (response: RelayGenerateResponse) => {
      for (const frame of response.frames) {
        const handlers = this.#open.get(frame.streamId);
        if (handlers === undefined) continue;
        if (frame.response) handlers.message(frame.response);
        // Not ended, or cancelled by its own message handler (which calls nothing after).
        if (!frame.end || !this.#open.delete(frame.streamId)) continue;
        if (frame.status === Code.OK) handlers.end(undefined, frame.workerMs || undefined);
        else
          handlers.end(
            new TesseraError(frame.status as Code, `${this.#name}: ${frame.statusMessage || "failed"}`),
          );
      }
    });
    const gone = (err?: ServiceError) => {
      if (this.#call !== call) return;
      this.#call = undefined;
      let error: TesseraError;
      if (err?.code === Code.UNIMPLEMENTED) {
        this.#supported = false;
        error = new RelayUnsupportedError(this.#name);
      } else {
        const why = err ? err.details || err.message : "the relay stream ended";
        error = new TesseraError(Code.UNAVAILABLE, `${this.#name}: ${why}`, { cause: err });
      }
      const open = [...this.#open.values()];
      this.#open.clear();
      for (const handlers of open) handlers.end(error);
    };
    call.on("error", gone);
    call.on("end", () => gone());
    return call;
  }
}

/**
 * The message's bytes, encoded once, or why protobuf cannot encode it (a value outside its field's
 * range that validation let through). Encoding inside grpc-js's write instead would fail the whole
 * stream, so every other generation on the worker's relay failed with it (found by fuzzing); this one
 * fails alone, naming the field.
 */
function encoded(init: MessageInitShape<typeof RelayGenerateRequestSchema>): Uint8Array | TesseraError {
  try {
    return toBinary(RelayGenerateRequestSchema, create(RelayGenerateRequestSchema, init));
  } catch (err) {
    return new TesseraError(Code.INVALID_ARGUMENT, `request: ${(err as Error).message}`);
  }
}

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
import { SlotTable } from "../../kernel/slot-table.ts";
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

/** A generation on the stream: its stream id and where its messages go. */
interface OpenGeneration {
  id: bigint;
  readonly handlers: RelayHandlers;
}

/**
 * A stream id is a sequence number above the generation's slot (SLOT_BITS bits): unique on the
 * stream, and the slot found from it without a Map.
 */
const SLOT_BITS = 20n;
const SLOT_MASK = (1n << SLOT_BITS) - 1n;

export class RelayChannel {
  readonly #name: string;
  readonly #client: GrpcClient;
  // Slots, not a Map keyed by stream id: this table lives as long as the router, and a long-lived Map
  // keeps what passes through it, every request's handlers and all they reach, until V8's next full
  // collection once its hash table has aged into the old generation (kernel/slot-table.ts): which
  // it did in the idle gaps between the router bench's rounds (docs/DESIGN.md).
  readonly #open = new SlotTable<OpenGeneration>();
  #call: ClientDuplexStream<Uint8Array, RelayGenerateResponse> | undefined;
  #sequence = 1n;
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
    const generation: OpenGeneration = { id: 0n, handlers };
    const slot = this.#open.add(generation);
    const streamId = (this.#sequence++ << SLOT_BITS) | BigInt(slot);
    generation.id = streamId;
    const open = { streamId, request, deadlineUnixMs: BigInt(deadline ?? 0), traceContext };
    const bytes = slot > SLOT_MASK ? tooMany(slot) : encoded({ kind: { case: "open", value: open } });
    if (bytes instanceof TesseraError) {
      this.#open.delete(slot);
      queueMicrotask(() => handlers.end(bytes));
      return () => {};
    }
    const call = this.#stream();
    call.write(bytes);
    return () => {
      if (!this.#remove(streamId) || this.#call !== call) return;
      const cancel = create(RelayGenerateRequestSchema, { kind: { case: "cancel", value: { streamId } } });
      call.write(toBinary(RelayGenerateRequestSchema, cancel));
    };
  }

  /** Ends the stream; the generations still on it fail with UNAVAILABLE. */
  close(): void {
    this.#call?.cancel();
  }

  /** The open generation with this stream id, if any. */
  #find(streamId: bigint): OpenGeneration | undefined {
    const generation = this.#open.get(Number(streamId & SLOT_MASK));
    return generation?.id === streamId ? generation : undefined;
  }

  /** Takes the generation off the channel; false if it was not on it. */
  #remove(streamId: bigint): boolean {
    return this.#find(streamId) !== undefined && this.#open.delete(Number(streamId & SLOT_MASK));
  }

  #stream(): ClientDuplexStream<Uint8Array, RelayGenerateResponse> {
    if (this.#call) return this.#call;
    // The stream outlives the request that happens to open it: opened outside any trace, so the
    // tracing interceptor gives it no span in that request's trace (each generation has its own).
    const call = context.with(ROOT_CONTEXT, () => this.#client.bidiStream(Relay.method.generate));
    this.#call = call;
    call.on("data", (response: RelayGenerateResponse) => {
      for (const frame of response.frames) {
        const handlers = this.#find(frame.streamId)?.handlers;
        if (handlers === undefined) continue;
        if (frame.response) handlers.message(frame.response);
        // Not ended, or cancelled by its own message handler (which calls nothing after).
        if (!frame.end || !this.#remove(frame.streamId)) continue;
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
      const open = this.#open.values();
      for (const { id } of open) this.#remove(id);
      for (const { handlers } of open) handlers.end(error);
    };
    call.on("error", gone);
    call.on("end", () => gone());
    return call;
  }
}

/** Refuses a generation past the slots a stream id can name (2^20 at once on one worker). */
function tooMany(slot: number): TesseraError {
  return new TesseraError(Code.RESOURCE_EXHAUSTED, `${slot} generations on one relay stream at once`);
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

// One attempt at a request on one endpoint: a Generate call with the prompt as token ids (tokenized
// by the router, so the worker's prefix hashes are the ones the router routed by), detokenized here
// and pushed on as events from the stream's data callbacks (no promise per token). Keeps the
// endpoint's books: requests in flight, time to first token, outlier successes and failures.
import { create } from "@bufbuild/protobuf";
import type { ServiceError } from "@grpc/grpc-js";
import {
  FinishReason,
  type GenerateResponse,
  Inference,
  SamplingParamsSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../common/errors.ts";
import type { SamplingParams } from "../../worker/engine/types.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import { Detokenizer } from "./detokenizer.ts";
import type { RouterEvent } from "./router-events.ts";
import type { PreparedRequest } from "./router-request.ts";

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
  /** Milliseconds since the epoch. */
  deadline: number | undefined;
  signal: AbortSignal;
  metrics: RouterMetrics | undefined;
  onEvent: (event: RouterEvent) => void;
}

/** An attempt's failure, with how many events it had pushed before it. */
export class AttemptError extends TesseraError {
  readonly events: number;

  constructor(error: TesseraError, events: number) {
    super(error.code, error.message, { cause: error.cause });
    this.events = events;
  }
}

/** Resolves when the endpoint ends the stream; rejects with an AttemptError (or the signal's reason). */
export function attempt(
  endpoint: Endpoint,
  prepared: PreparedRequest,
  options: AttemptOptions,
): Promise<void> {
  const { signal } = options;
  if (signal.aborted) return Promise.reject(signal.reason);
  const started = performance.now();
  let firstToken: number | undefined;
  let events = 0;
  const detokenizer = new Detokenizer(prepared.model.tokenizer, prepared.sampling, prepared.info.eosTokenIds);
  const stream = endpoint.client.serverStream(
    Inference.method.generate,
    {
      model: prepared.model.id,
      prompt: { case: "tokenIds", value: { ids: prepared.promptIds } },
      sampling: samplingMessage(prepared.sampling),
      requestId: options.requestId,
    },
    options.deadline === undefined ? {} : { deadline: options.deadline },
  );
  endpoint.inFlight++;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (code: Code, error?: unknown) => {
      if (settled) return;
      settled = true;
      endpoint.inFlight--;
      signal.removeEventListener("abort", cancel);
      const ms = performance.now() - started;
      options.metrics?.attempt(
        endpoint.name,
        code,
        ms / 1000,
        firstToken === undefined ? undefined : firstToken / 1000,
      );
      if (error === undefined) resolve();
      else reject(error);
    };
    const cancel = () => {
      stream.cancel();
      settle(Code.CANCELLED, signal.reason);
    };
    signal.addEventListener("abort", cancel, { once: true });
    stream.on("data", (message: GenerateResponse) => {
      if (settled) return;
      if (firstToken === undefined) {
        firstToken = performance.now() - started;
        endpoint.ttft.record(firstToken);
        endpoint.outliers.recordSuccess();
      }
      events++;
      try {
        options.onEvent(toEvent(message, detokenizer));
      } catch (err) {
        stream.cancel();
        settle(Code.INTERNAL, err);
      }
    });
    stream.on("end", () => settle(Code.OK));
    stream.on("error", (err: ServiceError) => {
      if (settled) return;
      const error = fromGrpc(err, endpoint.name);
      if (isEndpointFailure(error.code)) endpoint.outliers.recordFailure();
      settle(error.code, new AttemptError(error, events));
    });
  });
}

function toEvent(message: GenerateResponse, detokenizer: Detokenizer): RouterEvent {
  let text = "";
  for (const token of message.tokens) text += detokenizer.push(token.tokenId);
  if (message.finishReason === FinishReason.UNSPECIFIED)
    return { type: "tokens", tokens: message.tokens, text };
  text += detokenizer.finish(message.finishReason);
  const usage = {
    promptTokens: message.usage?.promptTokens ?? 0,
    completionTokens: message.usage?.completionTokens ?? 0,
  };
  return { type: "finish", reason: message.finishReason, usage, text };
}

/** The validated parameters as the proto message (every field explicit, so the worker applies no default). */
export function samplingMessage(s: SamplingParams) {
  const { seed, ...rest } = s;
  return create(SamplingParamsSchema, { ...rest, ...(seed === undefined ? {} : { seed }) });
}

function fromGrpc(err: ServiceError, endpoint: string): TesseraError {
  if (typeof err.code !== "number") return TesseraError.from(err);
  return new TesseraError(err.code, `${endpoint}: ${err.details || err.message || "failed"}`, { cause: err });
}

// One attempt at a request on one endpoint: a Generate call with the prompt as token ids (tokenized
// by the router, so the worker's prefix hashes are the ones the router routed by), detokenized here.
// Keeps the endpoint's books: requests in flight, time to first token, outlier successes and failures.
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
}

export async function* attempt(
  endpoint: Endpoint,
  prepared: PreparedRequest,
  options: AttemptOptions,
): AsyncGenerator<RouterEvent> {
  const { signal } = options;
  signal.throwIfAborted();
  const started = performance.now();
  let firstToken: number | undefined;
  let code: Code = Code.OK;
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
  const cancel = () => stream.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  endpoint.inFlight++;
  let ended = false;
  try {
    for await (const message of stream as AsyncIterable<GenerateResponse>) {
      if (firstToken === undefined) {
        firstToken = performance.now() - started;
        endpoint.ttft.record(firstToken);
        endpoint.outliers.recordSuccess();
      }
      yield toEvent(message, detokenizer);
    }
    ended = true;
  } catch (err) {
    if (signal.aborted) {
      code = Code.CANCELLED;
      throw signal.reason;
    }
    const error = fromGrpc(err, endpoint.name);
    code = error.code;
    if (isEndpointFailure(error.code)) endpoint.outliers.recordFailure();
    throw error;
  } finally {
    endpoint.inFlight--;
    signal.removeEventListener("abort", cancel);
    if (!ended) {
      stream.cancel();
      if (code === Code.OK) code = Code.CANCELLED;
    }
    options.metrics?.attempt(
      endpoint.name,
      code,
      (performance.now() - started) / 1000,
      firstToken && firstToken / 1000,
    );
  }
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

function fromGrpc(err: unknown, endpoint: string): TesseraError {
  const e = err as Partial<ServiceError>;
  if (typeof e.code !== "number") return TesseraError.from(err);
  return new TesseraError(e.code, `${endpoint}: ${e.details || e.message || "failed"}`, { cause: err });
}

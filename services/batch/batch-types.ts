// The shapes every batch format and executor share. A batch is a sequence of requests in input
// order; each becomes one result, written in the same order. Results follow OpenAI's batch output
// format (https://platform.openai.com/docs/guides/batch): a request that ran has `response` (with the
// HTTP status its endpoint answered: 200, or 400 with OpenAI's error body for a bad body), a line that
// could not be run at all (not JSON, no custom_id, a url we do not serve) has `error` instead.

/** The endpoints a batch line may name. */
export const BATCH_ENDPOINTS = ["/v1/completions", "/v1/chat/completions"] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** One runnable request: what an OpenAI batch line says (or what a CSV/Parquet row maps to). */
export interface BatchRequest {
  customId: string;
  url: BatchEndpoint;
  body: Record<string, unknown>;
}

/** An input record: a request to run, or a line that is already an error record. */
export type BatchItem =
  | { type: "request"; request: BatchRequest }
  | { type: "invalid"; customId: string; error: BatchLineError };

export interface BatchLineError {
  code: string;
  message: string;
}

/** What an endpoint answered for one request (an HTTP status and its JSON body). */
export interface BatchResponse {
  statusCode: number;
  requestId: string;
  body: unknown;
}

/** One line of an OpenAI batch output file. */
export interface BatchResult {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: BatchLineError | null;
}

/** Runs one request; throws only when it was cancelled (the batch stops), never for a bad request. */
export type BatchExecutor = (request: BatchRequest, signal: AbortSignal) => Promise<BatchResponse>;

let sequence = 0;
function resultId(): string {
  sequence = (sequence + 1) % 1e9;
  return `batch_req_${Date.now().toString(36)}${sequence.toString(36).padStart(6, "0")}`;
}

export function responseResult(customId: string, response: BatchResponse): BatchResult {
  const { statusCode, requestId, body } = response;
  return {
    id: resultId(),
    custom_id: customId,
    response: { status_code: statusCode, request_id: requestId, body },
    error: null,
  };
}

export function errorResult(customId: string, error: BatchLineError): BatchResult {
  return { id: resultId(), custom_id: customId, response: null, error };
}

/** A result that answered 200: the rest (bad bodies, failed requests, unrunnable lines) failed. */
export function succeeded(result: BatchResult): boolean {
  return result.response?.status_code === 200;
}

/** Generated tokens of a result (0 when it failed), for tokens/s. */
export function completionTokens(result: BatchResult): number {
  const body = result.response?.body as { usage?: { completion_tokens?: unknown } } | undefined;
  const n = body?.usage?.completion_tokens;
  return typeof n === "number" ? n : 0;
}

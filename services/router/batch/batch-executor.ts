// A Batch API line through the router's own request path: the same OpenAI parsing, validation,
// routing, failover and response shaping as POST /v1/completions, at the batch priority (the workers
// schedule interactive requests first) and as the caller who created the batch. A router at capacity
// or a model with no endpoint yet (429, 503) is waited out with backoff, as a client would retry; any
// other refusal is the line's answer (its status and OpenAI error body).
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { BatchExecutor, BatchRequest, BatchResponse } from "../../batch/batch-types.ts";
import { Backoff } from "../../kernel/backoff.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Router } from "../core/router.ts";
import type { RouterEvent } from "../core/router-events.ts";
import { errorBody, httpStatus } from "../http/http-errors.ts";
import {
  OPENAI_SAMPLING_DEFAULTS,
  parseChatRequest,
  parseCompletionRequest,
} from "../http/openai-request.ts";
import { responseBody } from "../http/openai-response.ts";

const WAITED_OUT = new Set<Code>([Code.RESOURCE_EXHAUSTED, Code.UNAVAILABLE]);
const MAX_TRIES = 30;

export function routerBatchExecutor(
  router: Router,
  priority: number,
  apiKey: string | undefined,
): BatchExecutor {
  return async (request, signal) => {
    const backoff = new Backoff({ initialMs: 200, maxMs: 10_000 });
    for (let attempt = 1; ; attempt++) {
      const requestId = randomUUID();
      try {
        return await generate(router, request, requestId, priority, apiKey, signal);
      } catch (err) {
        if (signal.aborted) throw signal.reason ?? err;
        const error = TesseraError.from(err);
        if (WAITED_OUT.has(error.code) && attempt < MAX_TRIES) {
          await delay(error.retryAfterMs ?? backoff.next(), undefined, { signal });
          continue;
        }
        return { statusCode: httpStatus(error.code), requestId, body: errorBody(error) };
      }
    }
  };
}

async function generate(
  router: Router,
  line: BatchRequest,
  requestId: string,
  priority: number,
  apiKey: string | undefined,
  signal: AbortSignal,
): Promise<BatchResponse> {
  const kind = line.url === "/v1/chat/completions" ? "chat" : "completion";
  const parsed = kind === "chat" ? parseChatRequest(line.body) : parseCompletionRequest(line.body);
  if (parsed.error) throw parsed.error;
  const request = parsed.value;
  if (request.stream) throw TesseraError.invalidArgument("stream", "a batch request is never streamed");
  const generation = await router.generate(
    {
      requestId,
      model: request.model,
      prompt: request.prompt,
      sampling: request.sampling,
      apiSamplingDefaults: OPENAI_SAMPLING_DEFAULTS,
      skipSpecialTokens: request.skipSpecialTokens,
      apiKey,
      priority,
    },
    signal,
  );
  const events: RouterEvent[] = [];
  await generation.read((event) => {
    events.push(event);
  });
  const model = router.models.resolve(generation.model).value!;
  const body = responseBody(
    {
      kind,
      id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${requestId}`,
      model: model.id,
      created: Math.floor(Date.now() / 1000),
      tokenizer: model.tokenizer,
      logprobs: request.logprobs,
    },
    events,
  );
  return { statusCode: 200, requestId, body };
}

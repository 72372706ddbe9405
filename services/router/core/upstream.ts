// The producer of a request's events: attempts on endpoints chosen by the selector until one streams.
// A failure before the first token from an unwell endpoint (UNAVAILABLE, INTERNAL...) is retried on
// another endpoint, up to maxAttempts; a failure after it ends the stream with UNAVAILABLE, the
// tokens already sent standing. Other failures (the request's own fault, its deadline) end it as is.
import { Code, TesseraError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import { AttemptError, attempt, isEndpointFailure } from "./attempt.ts";
import type { EndpointSelector } from "./endpoint-selector.ts";
import type { Producer } from "./flight.ts";
import type { PreparedRequest } from "./router-request.ts";

export interface UpstreamOptions {
  selector: EndpointSelector;
  maxAttempts: number;
  deadline: number | undefined;
  metrics: RouterMetrics | undefined;
  log: Logger;
}

export function upstream(prepared: PreparedRequest, options: UpstreamOptions): Producer {
  const { requestId } = prepared.request;
  const model = prepared.model.id;
  return async (flight, signal) => {
    const tried = new Set<string>();
    let last: TesseraError | undefined;
    for (let n = 1; n <= options.maxAttempts; n++) {
      const selection = options.selector.select(prepared, tried);
      if (selection === undefined) break;
      const { endpoint } = selection;
      tried.add(endpoint.name);
      if (n > 1) options.metrics?.retried(model);
      const onEvent = (event: Parameters<typeof flight.push>[0]) => {
        if (flight.events.length === 0) flight.endpoint = endpoint.name;
        flight.push(event);
      };
      try {
        return await attempt(endpoint, prepared, {
          requestId,
          deadline: options.deadline,
          signal,
          metrics: options.metrics,
          onEvent,
        });
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        const error = TesseraError.from(err);
        const events = err instanceof AttemptError ? err.events : 0;
        if (events > 0) {
          options.log.warn(
            { requestId, endpoint: endpoint.name, events, err: error.message },
            "endpoint failed mid-stream",
          );
          throw new TesseraError(Code.UNAVAILABLE, `the endpoint failed mid-stream: ${error.message}`, {
            cause: error,
          });
        }
        if (!isEndpointFailure(error.code)) throw error;
        last = error;
        options.log.warn(
          { requestId, endpoint: endpoint.name, attempt: n, err: error.message },
          "attempt failed before the first token",
        );
      }
    }
    const why = last
      ? `${tried.size} attempt(s) failed, the last with: ${last.message}`
      : "no eligible endpoint";
    throw new TesseraError(Code.UNAVAILABLE, `model "${model}": ${why}`, { cause: last });
  };
}

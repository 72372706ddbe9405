// `tessera batch --url`: each batch line is POSTed to a router's OpenAI door (its url under the base
// URL) and the answer, whatever its status, is the line's response. A router that sheds load (429,
// 503) or cannot be reached is retried with backoff (its retry-after-ms hint when it gives one), so a
// busy cluster slows the batch down rather than filling the output with errors.
import { setTimeout as delay } from "node:timers/promises";
import type { BatchExecutor } from "../batch/batch-types.ts";
import { Backoff } from "../kernel/backoff.ts";

const RETRIED_STATUS = new Set([429, 502, 503, 504]);
const MAX_TRIES = 8;

export function httpExecutor(baseUrl: string, apiKey: string | undefined): BatchExecutor {
  const base = baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  return async (request, signal) => {
    const backoff = new Backoff({ initialMs: 250, maxMs: 10_000 });
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${base}${request.url}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(apiKey && { authorization: `Bearer ${apiKey}` }),
          },
          body: JSON.stringify(request.body),
          signal,
        });
      } catch (err) {
        if (signal.aborted || attempt >= MAX_TRIES) throw err;
        await delay(backoff.next(), undefined, { signal });
        continue;
      }
      const text = await response.text();
      if (RETRIED_STATUS.has(response.status) && attempt < MAX_TRIES) {
        const hint = Number(response.headers.get("retry-after-ms"));
        await delay(Number.isFinite(hint) && hint > 0 ? hint : backoff.next(), undefined, { signal });
        continue;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = { error: { message: text, type: "server_error" } };
      }
      return {
        statusCode: response.status,
        requestId: response.headers.get("x-request-id") ?? request.customId,
        body,
      };
    }
  };
}

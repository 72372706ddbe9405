// A finished request's phases, handed to its trace (when it has one) from the times the engine kept:
// queue (queued -> first scheduled), prefill (-> first token), decode (-> last token) and the stores
// of its KV blocks to the remote tier (first store -> every store settled). The remote fetch before
// queueing is recorded where it happens (engine.ts).
import type { EngineRequest } from "./request.ts";

export function recordPhases(request: EngineRequest, now: number): void {
  const { trace, timings: t } = request;
  if (!trace) return;
  const scheduled = t.firstScheduled ?? now;
  trace.phase("queue", t.submitted ?? t.arrival, scheduled);
  if (t.firstScheduled !== undefined)
    trace.phase("prefill", t.firstScheduled, t.firstToken ?? now, {
      "tessera.prompt_tokens": request.promptLength,
      "tessera.cached_prompt_tokens": request.numCachedPromptTokens,
    });
  if (t.firstToken !== undefined && request.numOutputTokens > 1)
    trace.phase("decode", t.firstToken, t.lastToken ?? now, {
      "tessera.output_tokens": request.numOutputTokens,
    });
  const writeStart = t.firstKvWrite;
  if (writeStart === undefined || request.kvWrites.length === 0) return;
  const writes = request.kvWrites.length;
  void Promise.allSettled(request.kvWrites).then(() =>
    trace.phase("kv_transfer.write", writeStart, Date.now(), { "tessera.kv.stores": writes }),
  );
}

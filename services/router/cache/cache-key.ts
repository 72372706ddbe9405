// Which requests may be answered from the cache, and their exact key. A request is deterministic when
// it decodes greedily (temperature 0) or names its seed: the same model revision, prompt tokens and
// sampling parameters then give the same tokens. The key covers every validated sampling field, so
// requests that differ only in how they spelled a default share an entry.
import { hash } from "node:crypto";
import type { SamplingParams } from "../../inference/types.ts";
import type { RouterEvent } from "../core/router-events.ts";

export function isDeterministic(sampling: SamplingParams): boolean {
  return sampling.temperature === 0 || sampling.seed !== undefined;
}

export function cacheKey(
  model: string,
  revision: string,
  promptIds: readonly number[],
  sampling: SamplingParams,
): string {
  const fields = JSON.stringify(sampling, (_key, value) =>
    typeof value === "bigint" ? value.toString() : value instanceof Map ? [...value] : value,
  );
  const ids = Uint32Array.from(promptIds);
  return hash(
    "sha256",
    Buffer.concat([Buffer.from(`${model}@${revision}\u0000${fields}\u0000`), Buffer.from(ids.buffer)]),
    "hex",
  );
}

/** A rough size of a response in memory, for the cache's byte budget. */
export function responseBytes(events: readonly RouterEvent[]): number {
  let bytes = 64;
  for (const event of events) {
    bytes += 48 + 2 * event.text.length;
    if (event.type === "tokens") for (const t of event.tokens) bytes += 48 + 40 * t.topLogprobs.length;
  }
  return bytes;
}

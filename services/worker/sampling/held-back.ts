// min_tokens (vLLM semantics): until a request has generated min_tokens tokens, the ids that would end
// it (the model's eos ids unless ignore_eos, and its stop_token_ids) cannot be sampled. They are held
// back by giving them the "penalized" logit -Infinity among the penalty scratch's touched ids, so the
// sampler's penalized path picks the token and, as for penalties, reported logprobs stay those of the
// raw logits (vLLM's raw_logprobs are taken before its min_tokens logits processor too).

import { Code, TesseraError } from "../../kernel/errors.ts";
import type { PenaltyScratch } from "./penalties.ts";

/** The distinct ids a request holds back while min_tokens is not reached (none when min_tokens is 0). */
export function heldBackIds(
  params: { minTokens?: number; stopTokenIds: readonly number[]; ignoreEos: boolean },
  eosTokenIds: readonly number[],
): Int32Array {
  if (!((params.minTokens ?? 0) > 0)) return new Int32Array(0);
  const ids = new Set([...params.stopTokenIds, ...(params.ignoreEos ? [] : eosTokenIds)]);
  return Int32Array.from(ids);
}

/**
 * Adds `held` to the `n` touched ids of `out` with the penalized logit -Infinity (an id already
 * touched by a penalty keeps its entry, now -Infinity); returns the new count.
 */
export function holdBack(logits: Float32Array, held: Int32Array, out: PenaltyScratch, n: number): number {
  out.reserve(n + held.length);
  let count = n;
  for (const id of held) {
    if (!(id >= 0 && id < logits.length)) {
      throw new TesseraError(
        Code.INTERNAL,
        `sampler: held-back token ${id} is outside the logits (${logits.length})`,
      );
    }
    let at = out.ids.subarray(0, n).indexOf(id);
    if (at < 0) {
      at = count++;
      out.ids[at] = id;
      out.raw[at] = logits[id]!;
    }
    out.penalized[at] = Number.NEGATIVE_INFINITY;
  }
  return count;
}

// logit_bias (OpenAI's parameter): a request's bias per token id is added to that id's logit before
// sampling. Like held-back ids (held-back.ts) the biased ids join the penalty scratch's touched ids with
// their biased value as the "penalized" logit, so the sampler's penalized path picks the token without
// copying the vocabulary, and reported logprobs stay those of the raw logits, as vLLM's default
// (logprobs_mode "raw_logprobs", taken before its logit_bias processor). The bias is added after the
// repetition/presence/frequency penalties (vLLM adds it before them; the two orders differ only for a
// biased id under a repetition penalty) and before held-back ids, so min_tokens still wins.

import { Code, TesseraError } from "../../kernel/errors.ts";
import type { PenaltyScratch } from "./penalties.ts";

/** A request's bias as two parallel arrays (what a RowSampling carries to another process). */
export interface LogitBias {
  ids: Int32Array;
  values: Float32Array;
}

export const NO_BIAS: LogitBias = { ids: new Int32Array(0), values: new Float32Array(0) };

export function logitBiasArrays(bias: ReadonlyMap<number, number> | undefined): LogitBias {
  if (bias === undefined || bias.size === 0) return NO_BIAS;
  return { ids: Int32Array.from(bias.keys()), values: Float32Array.from(bias.values()) };
}

/**
 * Adds `bias` to the `n` touched ids of `out` (an id already touched by a penalty gets the bias on top of
 * its penalized value); returns the new count.
 */
export function addBias(logits: Float32Array, bias: LogitBias, out: PenaltyScratch, n: number): number {
  out.reserve(n + bias.ids.length);
  let count = n;
  for (let i = 0; i < bias.ids.length; i++) {
    const id = bias.ids[i]!;
    if (!(id >= 0 && id < logits.length)) {
      throw new TesseraError(
        Code.INTERNAL,
        `sampler: logit_bias id ${id} is outside the logits (${logits.length})`,
      );
    }
    let at = out.ids.subarray(0, n).indexOf(id);
    if (at < 0) {
      at = count++;
      out.ids[at] = id;
      out.raw[at] = logits[id]!;
      out.penalized[at] = logits[id]!;
    }
    out.penalized[at] = out.penalized[at]! + bias.values[i]!;
  }
  return count;
}

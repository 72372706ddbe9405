// Prompt lookup (n-gram) proposals, with vLLM's semantics: the longest suffix of the request's tokens
// (prompt and output), between prompt_lookup_min and prompt_lookup_max long, that also occurs earlier;
// among matches of that length the earliest; the proposal is the up to k tokens that followed it. Costs
// nothing beside the model, so outputs that copy from their prompt (edits, quotes, code) come several
// tokens per step.
import type { EngineRequest } from "../engine/request.ts";
import type { ProposalRequest, Proposer } from "./proposer.ts";

export class NgramProposer implements Proposer {
  readonly method = "ngram";
  private readonly min: number;
  private readonly max: number;

  constructor(options: { promptLookupMin: number; promptLookupMax: number }) {
    this.min = options.promptLookupMin;
    this.max = options.promptLookupMax;
  }

  propose(batch: readonly ProposalRequest[]): void {
    for (const { request, k } of batch) {
      const tokens = lookup(request.tokens, this.min, this.max, k);
      if (tokens.length > 0) request.draft = { tokens };
    }
  }

  release(_request: EngineRequest): void {}

  async close(): Promise<void> {}
}

/** The up to `k` tokens that followed the earliest, longest earlier occurrence of the suffix of `tokens`. */
export function lookup(tokens: readonly number[], min: number, max: number, k: number): number[] {
  const n = tokens.length;
  if (n < min + 1 || k <= 0) return [];
  let bestLength = 0;
  let bestEnd = -1;
  // An occurrence ending at `end` (< n - 1): how many of its tokens, going back, equal the suffix's.
  for (let end = 0; end < n - 1; end++) {
    let length = 0;
    while (length < max && length <= end && tokens[end - length] === tokens[n - 1 - length]) length++;
    if (length > bestLength) {
      bestLength = length;
      bestEnd = end;
      if (length === max) break;
    }
  }
  if (bestLength < min) return [];
  return tokens.slice(bestEnd + 1, Math.min(n, bestEnd + 1 + k));
}

// A request's speculative proposals between two steps: the tokens a proposer guessed to follow its
// last token, and for each the distribution it was drawn from (a draft model sampling), or nothing when
// the proposal is a point mass (n-gram lookup, or a draft model's argmax for a greedy request).
import type { TokenDistribution } from "../sampling/sampler.ts";

export interface Draft {
  tokens: number[];
  /** Per proposal: the draft distribution q it was sampled from; undefined entries (or none) = point mass. */
  q?: (TokenDistribution | undefined)[];
}

export const NO_DRAFT: Draft = Object.freeze({ tokens: [] }) as Draft;

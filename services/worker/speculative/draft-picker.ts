// Picks a draft model's proposal from its logits, in the draft's thread: a greedy request takes the
// argmax (a point mass: verification compares it with the target's own greedy token), after its
// logit_bias when it has one (a banned id would only be rejected); a sampled request draws from the
// draft's distribution under its temperature, min_p, top_k and top_p (penalties apply to the target
// only: any q keeps the output exact, verify-draft.ts), keyed by (seed, position, DRAFT_DRAW) so a
// seeded request repeats itself, and keeps that distribution for the rejection test.
import { Code, TesseraError } from "../../kernel/errors.ts";
import { CounterRng } from "../sampling/philox.ts";
import { Sampler, type TokenDistribution } from "../sampling/sampler.ts";
import type { DraftPicking } from "./draft-messages.ts";
import { DRAFT_DRAW } from "./verify-draft.ts";

export interface Pick {
  token: number;
  /** The distribution a sampled proposal was drawn from; undefined for a point mass. */
  q: TokenDistribution | undefined;
}

export class DraftPicker {
  private readonly sampler: Sampler | undefined;
  private readonly rng: CounterRng | undefined;

  constructor(picking: DraftPicking) {
    if (picking.kind === "argmax") return;
    this.sampler = new Sampler(picking.params);
    if (picking.kind === "sampled") this.rng = new CounterRng(this.sampler.seed);
  }

  /** Whether proposals are draws (each with its distribution) rather than point masses. */
  get sampled(): boolean {
    return this.rng !== undefined;
  }

  /** The proposal at `position` (its index in prompt + output) from the draft's logits that predict it. */
  pick(logits: Float32Array, position: number): Pick {
    const { sampler, rng } = this;
    if (!sampler) return { token: argmax(logits), q: undefined };
    const q = sampler.distribution(logits, position);
    if (!rng) return { token: q.ids[0]!, q: undefined };
    const u = rng.uniform(position, DRAFT_DRAW);
    let acc = 0;
    for (let i = 0; i < q.ids.length; i++) {
      acc += q.probs[i]!;
      if (u < acc) return { token: q.ids[i]!, q };
    }
    return { token: q.ids[q.ids.length - 1]!, q };
  }
}

/**
 * The first index of the largest logit: the draft's greedy token, without the log-sum-exp that the
 * sampler's logitStats adds for logprobs (proposals report none). NaN fails, as the sampler does.
 */
export function argmax(logits: Float32Array): number {
  let best = 0;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > max) {
      max = v;
      best = i;
    } else if (Number.isNaN(v)) {
      throw new TesseraError(Code.INTERNAL, `draft model: logit ${i} is NaN`);
    }
  }
  return best;
}

// Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, 2018). Every endpoint
// may hold at most capacity = ceil((1 + epsilon) * (inFlight + 1) / n) requests, counting the new
// one; the request goes to the first endpoint on the ring walk from its key that is under capacity,
// so it stays on its home (where its prefix is cached) unless the home is overloaded, and overflow
// walks the ring instead of piling onto one neighbour.
//
// As a score: the first endpoint under capacity scores 1, the next ones under capacity score less the
// further the walk reaches them (1 - rank / n), endpoints at capacity score 0. With this scorer alone
// and the max-score picker, the pick is exactly the bounded-loads choice. Loads are this router's own
// in-flight counts, so two routers at equal load agree on every pick.

import { z } from "zod";
import { CONSISTENT_HASH } from "../../../api/routing-plugins.ts";
import type { Candidate, ScorerDefinition } from "../plugin.ts";

const params = z.strictObject({
  /** Headroom over the mean load: capacity = ceil((1 + epsilon) * mean). */
  epsilon: z.number().positive().default(0.25),
});

/** The most requests an endpoint may hold once one more is added to `candidates`. */
export function capacity(candidates: readonly Candidate[], epsilon: number): number {
  const total = candidates.reduce((sum, c) => sum + c.inFlight, 0);
  return Math.ceil(((1 + epsilon) * (total + 1)) / candidates.length);
}

export const consistentHashScorer: ScorerDefinition<z.infer<typeof params>> = {
  type: CONSISTENT_HASH,
  kind: "scorer",
  params,
  create: ({ epsilon }) => ({
    type: CONSISTENT_HASH,
    score(_request, candidates) {
      const cap = capacity(candidates, epsilon);
      let rank = 0;
      return candidates.map((c) => (c.inFlight < cap ? 1 - rank++ / candidates.length : 0));
    },
  }),
};

// Least latency: each endpoint scores best / its own moving average of time to first token, so the
// fastest scores 1. An endpoint with no figure yet scores 1, breaking the house rule that missing data
// scores 0 on purpose: an endpoint that never gets a request never gets a figure, so a new replica
// would be starved forever.

import { z } from "zod";
import { LEAST_LATENCY } from "../../../api/routing-plugins.ts";
import type { ScorerDefinition } from "../plugin.ts";

const params = z.strictObject({});

export const latencyScorer: ScorerDefinition<z.infer<typeof params>> = {
  type: LEAST_LATENCY,
  kind: "scorer",
  params,
  create: () => ({
    type: LEAST_LATENCY,
    score(_request, candidates) {
      const known = candidates.flatMap((c) => (c.ttftMs === undefined ? [] : [c.ttftMs]));
      const best = Math.max(1e-3, Math.min(...known));
      return candidates.map((c) =>
        c.ttftMs === undefined ? 1 : Math.min(1, best / Math.max(1e-3, c.ttftMs)),
      );
    },
  }),
};

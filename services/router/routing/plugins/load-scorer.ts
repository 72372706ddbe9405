// Load-aware scoring from what workers report (tessera.v1.WorkerLoad) and what this router has in
// flight: half of the score falls with the queue (1 / (1 + queue), where the queue is the larger of
// this router's in-flight count and the worker's running + waiting requests), half with KV-cache
// usage (1 - used / total). An endpoint with no recent report scores 0 (and it is logged).

import { z } from "zod";
import { LOAD } from "../../../api/routing-plugins.ts";
import type { ScorerDefinition } from "../plugin.ts";

const params = z.strictObject({});

export const loadScorer: ScorerDefinition<z.infer<typeof params>> = {
  type: LOAD,
  kind: "scorer",
  params,
  create: (_params, { log }) => ({
    type: LOAD,
    score(_request, candidates) {
      return candidates.map((c) => {
        if (c.load === undefined) {
          log.debug({ endpoint: c.name }, "load scorer: no recent load report, scoring 0");
          return 0;
        }
        const queue = Math.max(c.inFlight, c.load.running + c.load.waiting);
        const kvFree = c.load.kvBlocksTotal > 0 ? 1 - c.load.kvBlocksUsed / c.load.kvBlocksTotal : 0;
        return (1 / (1 + queue) + kvFree) / 2;
      });
    },
  }),
};

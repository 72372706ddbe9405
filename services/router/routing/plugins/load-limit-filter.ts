// Drops endpoints whose latest load report is over a limit: too many queued requests, or a KV cache
// too full. Endpoints with no report are kept (no evidence against them).

import { z } from "zod";
import { LOAD_LIMIT } from "../../../api/routing-plugins.ts";
import type { FilterDefinition } from "../plugin.ts";

const params = z.strictObject({
  /** Most requests waiting in the worker's scheduler. */
  maxWaiting: z.int().min(0).optional(),
  /** Highest KV-cache usage, as a fraction of the pool. */
  maxKvUsage: z.number().gt(0).max(1).optional(),
});

export const loadLimitFilter: FilterDefinition<z.infer<typeof params>> = {
  type: LOAD_LIMIT,
  kind: "filter",
  params,
  create: ({ maxWaiting, maxKvUsage }) => ({
    type: LOAD_LIMIT,
    filter: (_request, candidates) =>
      candidates.filter((c) => {
        if (c.load === undefined) return true;
        if (maxWaiting !== undefined && c.load.waiting > maxWaiting) return false;
        const usage = c.load.kvBlocksTotal > 0 ? c.load.kvBlocksUsed / c.load.kvBlocksTotal : 0;
        return maxKvUsage === undefined || usage <= maxKvUsage;
      }),
  }),
};

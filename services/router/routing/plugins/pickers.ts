// Pickers: how one endpoint is chosen from the scores.
//   max-score     the highest score; ties go to the candidate nearest the key on the ring (deterministic)
//   round-robin   cycles through the candidates with the highest score (with no scorer: all of them)
//   random        uniformly among the candidates with the highest score
//   power-of-two  two distinct candidates at random, the higher score wins (with the load scorer:
//                 the power-of-two-choices balancer)

import { z } from "zod";
import { MAX_SCORE, POWER_OF_TWO, RANDOM, ROUND_ROBIN } from "../../../api/routing-plugins.ts";
import { argMax, type PickerDefinition, topIndices } from "../plugin.ts";

const none = z.strictObject({});

export const maxScorePicker: PickerDefinition<z.infer<typeof none>> = {
  type: MAX_SCORE,
  kind: "picker",
  params: none,
  create: () => ({ type: MAX_SCORE, pick: (_request, _candidates, scores) => argMax(scores) }),
};

export const roundRobinPicker: PickerDefinition<z.infer<typeof none>> = {
  type: ROUND_ROBIN,
  kind: "picker",
  params: none,
  create: () => {
    let turn = 0;
    return {
      type: ROUND_ROBIN,
      pick(_request, candidates, scores) {
        // By name, not ring order, so the cycle does not depend on each request's key.
        const top = topIndices(scores).sort((a, b) => candidates[a]!.name.localeCompare(candidates[b]!.name));
        return top[turn++ % top.length]!;
      },
    };
  },
};

export const randomPicker: PickerDefinition<z.infer<typeof none>> = {
  type: RANDOM,
  kind: "picker",
  params: none,
  create: (_params, { random }) => ({
    type: RANDOM,
    pick(_request, _candidates, scores) {
      const top = topIndices(scores);
      return top[Math.floor(random() * top.length)]!;
    },
  }),
};

export const powerOfTwoPicker: PickerDefinition<z.infer<typeof none>> = {
  type: POWER_OF_TWO,
  kind: "picker",
  params: none,
  create: (_params, { random }) => ({
    type: POWER_OF_TWO,
    pick(_request, candidates, scores) {
      const n = candidates.length;
      if (n === 1) return 0;
      const a = Math.floor(random() * n);
      const b = (a + 1 + Math.floor(random() * (n - 1))) % n;
      return scores[b]! > scores[a]! ? b : a;
    },
  }),
};

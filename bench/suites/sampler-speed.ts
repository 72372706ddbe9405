// Sampler cost per row at a 151,936-token vocabulary (Qwen2's), for the sampling settings users pick,
// with a 4,000-token prompt and 1,000 generated tokens in the penalty history: best of 5 rounds of 50.
// (Was a timed assertion in sampler.spec.ts; speed belongs here, the spec keeps the behaviour.)

import { greedySampling } from "../../services/inference/sampling-params.ts";
import type { SamplingParams } from "../../services/inference/types.ts";
import { TokenHistory } from "../../services/worker/sampling/penalties.ts";
import { Rng } from "../../services/worker/sampling/rng.ts";
import { Sampler } from "../../services/worker/sampling/sampler.ts";

const VOCAB = 151_936;
const CONFIGS: [string, Partial<SamplingParams>][] = [
  ["greedy", { temperature: 0 }],
  ["temperature 1", { temperature: 1 }],
  ["temperature 0.8", { temperature: 0.8 }],
  ["top_k 50", { temperature: 0.8, topK: 50 }],
  ["top_p 0.95", { temperature: 0.8, topP: 0.95 }],
  ["top_k 50 + top_p 0.9 + logprobs 5", { temperature: 0.8, topK: 50, topP: 0.9, logprobs: 5 }],
  ["min_p 0.05", { temperature: 0.8, minP: 0.05 }],
  [
    "temperature 0.8 + logit_bias (10 ids)",
    {
      temperature: 0.8,
      logitBias: new Map(Array.from({ length: 10 }, (_, i) => [i * 9_973, i - 5] as const)),
    },
  ],
  [
    "greedy + penalties",
    { temperature: 0, repetitionPenalty: 1.2, presencePenalty: 0.5, frequencyPenalty: 0.5 },
  ],
  [
    "top_p 0.95 + min_p 0.05 + penalties",
    { temperature: 0.8, topP: 0.95, minP: 0.05, repetitionPenalty: 1.2, frequencyPenalty: 0.5 },
  ],
];

/** Milliseconds per sampled row, by setting. */
export function samplerSpeed(): Record<string, number> {
  const rng = new Rng(12n);
  const logits = Float32Array.from({ length: VOCAB }, () => (rng.nextFloat() - 0.5) * 16);
  const ids = (n: number) => Array.from({ length: n }, () => Math.floor(rng.nextFloat() * VOCAB));
  const history = new TokenHistory(ids(4000));
  for (const id of ids(1000)) history.append(id);
  const ms: Record<string, number> = {};
  for (const [name, overrides] of CONFIGS) {
    const sampler = new Sampler(greedySampling({ seed: 1n, ...overrides }));
    for (let i = 0; i < 5; i++) sampler.sample(logits, 5000 + i, history);
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      const start = performance.now();
      for (let i = 0; i < 50; i++) sampler.sample(logits, 5000 + i, history);
      best = Math.min(best, (performance.now() - start) / 50);
    }
    ms[name] = best;
  }
  return ms;
}

// The routing plugin contracts. A request is routed in three stages over the endpoints that may take
// it (healthy, not ejected, not already tried), listed in the order the hash ring meets them from the
// request's key:
//   filters  drop endpoints (a filter that would drop them all is skipped);
//   scorers  give each endpoint a score in [0, 1]; the pipeline sums them with the weights of the
//            configuration (weights belong to configuration, not to the scorer);
//   picker   chooses one endpoint from the scores.
// Plugins read figures that producers computed earlier (router-side in-flight counts, the workers'
// load reports, latency averages); they never call out.
import type { z } from "zod";
import type { Logger } from "../../kernel/log.ts";
import type { RoutingKey } from "./routing-key.ts";

/** What a worker reported through tessera.v1.WorkerLoad. */
export interface LoadReport {
  running: number;
  waiting: number;
  kvBlocksUsed: number;
  kvBlocksTotal: number;
}

/** An endpoint as the plugins see it. */
export interface Candidate {
  readonly name: string;
  /** Requests this router is streaming from the endpoint right now. */
  readonly inFlight: number;
  /** The endpoint's latest load report, when it is recent enough to trust. */
  readonly load: LoadReport | undefined;
  /** Moving average of the endpoint's time to first token, in ms (none before its first request). */
  readonly ttftMs: number | undefined;
}

export interface RoutingRequest {
  readonly key: RoutingKey;
  readonly promptTokens: number;
}

export interface Filter {
  readonly type: string;
  filter(request: RoutingRequest, candidates: readonly Candidate[]): Candidate[];
}

export interface Scorer {
  readonly type: string;
  /** One score in [0, 1] per candidate, in the candidates' order. */
  score(request: RoutingRequest, candidates: readonly Candidate[]): number[];
}

export interface Picker {
  readonly type: string;
  /** The index of the chosen candidate (candidates is never empty). */
  pick(request: RoutingRequest, candidates: readonly Candidate[], scores: readonly number[]): number;
}

export interface PluginContext {
  /** Uniform in [0, 1); injected so tests are repeatable. */
  random: () => number;
  log: Logger;
}

interface Definition<K extends string, P, T> {
  readonly type: string;
  readonly kind: K;
  /** Validates the plugin's parameters over its defaults (unknown keys are errors). */
  readonly params: z.ZodType<P>;
  create(params: P, context: PluginContext): T;
}

export type FilterDefinition<P = unknown> = Definition<"filter", P, Filter>;
export type ScorerDefinition<P = unknown> = Definition<"scorer", P, Scorer>;
export type PickerDefinition<P = unknown> = Definition<"picker", P, Picker>;
export type PluginDefinition = FilterDefinition | ScorerDefinition | PickerDefinition;

/** Index of the highest score; ties go to the earliest candidate (the one nearest the key on the ring). */
export function argMax(scores: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[best]!) best = i;
  return best;
}

/** Indices of every candidate with the highest score, in order. */
export function topIndices(scores: readonly number[]): number[] {
  const max = Math.max(...scores);
  return scores.flatMap((s, i) => (s === max ? [i] : []));
}

// Runs filters -> scorers -> picker over the endpoints that may take a request, timing every stage.
import type { Candidate, RoutingRequest } from "./plugin.ts";
import { argMax } from "./plugin.ts";
import type { Plugins } from "./routing-config.ts";

/** Told about every stage and every pick (metrics implement it). */
export interface RoutingObserver {
  stage(plugin: string, seconds: number): void;
  /** `agreed`: the scorers whose own best candidate was the one picked. */
  picked(agreed: readonly string[], home: boolean): void;
}

export interface Pick {
  candidate: Candidate;
  /** The weighted score of each candidate left after the filters. */
  scores: number[];
  /** The pick is the key's home: the first eligible endpoint on the ring walk. */
  home: boolean;
}

export class RoutingPipeline {
  readonly #plugins: Plugins;
  readonly #observer: RoutingObserver | undefined;

  constructor(plugins: Plugins, observer?: RoutingObserver) {
    this.#plugins = plugins;
    this.#observer = observer;
  }

  /** `candidates` in ring-walk order from the request's key; undefined when there are none. */
  pick(request: RoutingRequest, candidates: readonly Candidate[]): Pick | undefined {
    if (candidates.length === 0) return undefined;
    let left: readonly Candidate[] = candidates;
    for (const filter of this.#plugins.filters) {
      const kept = this.#timed(filter.type, () => filter.filter(request, left));
      if (kept.length > 0) left = kept;
    }
    const total = new Array<number>(left.length).fill(0);
    const favourites: { type: string; best: number }[] = [];
    for (const { scorer, weight } of this.#plugins.scorers) {
      const scores = this.#timed(scorer.type, () => scorer.score(request, left));
      for (let i = 0; i < left.length; i++) total[i]! += weight * clamp(scores[i] ?? 0);
      favourites.push({ type: scorer.type, best: argMax(scores) });
    }
    const { picker } = this.#plugins;
    const index = this.#timed(picker.type, () => picker.pick(request, left, total));
    const candidate = left[index] ?? left[0]!;
    const home = candidate === candidates[0];
    const agreed = favourites.flatMap((f) => (f.best === index ? [f.type] : []));
    this.#observer?.picked(agreed, home);
    return { candidate, scores: total, home };
  }

  #timed<T>(plugin: string, run: () => T): T {
    if (this.#observer === undefined) return run();
    const started = performance.now();
    const result = run();
    this.#observer.stage(plugin, (performance.now() - started) / 1000);
    return result;
  }
}

function clamp(score: number): number {
  return Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0;
}

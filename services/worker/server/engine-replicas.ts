// Several engines of one model in this process, served as one model: each request goes to the replica
// with the fewest requests (running and waiting), the lower index on a tie. `tessera batch` runs them
// where it has no latency target (offline-engine.ts): each replica's model thread runs its steps with
// its share of the cores, so the steps of two replicas run side by side instead of one step at a time
// split over all the cores.
import type { GenerateEvent, GenerateRequest, ModelDescription } from "../../inference/types.ts";
import type { Tokenizer } from "../../tokenizer/tokenizer.ts";
import type { Engine } from "../engine/engine.ts";

/** What EngineReplicas reads of an engine (Engine satisfies it; specs can fake it). */
export type Replica = Pick<Engine, "description" | "tokenizer" | "chatTemplate" | "attention" | "close"> & {
  generate(request: GenerateRequest, signal?: AbortSignal): AsyncIterable<GenerateEvent>;
  readonly engines: { readonly numRunning: number; readonly numWaiting: number };
};

export class EngineReplicas {
  readonly replicas: readonly Replica[];

  constructor(replicas: readonly Replica[]) {
    if (replicas.length === 0) throw new Error("EngineReplicas: no replica");
    this.replicas = replicas;
  }

  get description(): ModelDescription {
    return this.first.description;
  }

  get tokenizer(): Tokenizer {
    return this.first.tokenizer;
  }

  get chatTemplate(): Engine["chatTemplate"] {
    return this.first.chatTemplate;
  }

  /** The attention backend (every replica runs the one the first picked). */
  get attention(): Engine["attention"] {
    return this.first.attention;
  }

  generate(request: GenerateRequest, signal?: AbortSignal): AsyncIterable<GenerateEvent> {
    return this.replicas[leastBusy(this.replicas)]!.generate(request, signal);
  }

  async close(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.close()));
  }

  private get first(): Replica {
    return this.replicas[0]!;
  }
}

/** The index of the replica with the fewest requests (running + waiting); the lowest on a tie. */
export function leastBusy(replicas: readonly Pick<Replica, "engines">[]): number {
  let best = 0;
  let bestLoad = Number.POSITIVE_INFINITY;
  for (const [i, { engines }] of replicas.entries()) {
    const load = engines.numRunning + engines.numWaiting;
    if (load < bestLoad) {
      best = i;
      bestLoad = load;
    }
  }
  return best;
}

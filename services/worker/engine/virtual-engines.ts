// Several scheduling loops over one model, as vLLM's virtual engines do for pipeline parallelism: each
// EngineCore has its own requests, scheduler and share of the KV pool (kv-share.ts) and drives the same
// runner, so a parallel group has one batch per engine in flight: while stage 1 runs one engine's step,
// stage 0 runs another's, and a tensor rank computes one batch while another waits for its all-reduce.
// Steps of different engines touch disjoint blocks (a block two engines share is full and read-only),
// so they are independent and may run in any order. A request stays with the engine it was given to:
// the least loaded one (running + waiting, the lower index on a tie). The prefix cache is the pool's,
// shared by every engine, so a cached prefix is a hit whichever engine a request goes to.
import type { EngineCore } from "./engine-core.ts";
import type { EngineRequest } from "./request.ts";
import type { Scheduler } from "./scheduler.ts";

export class VirtualEngines {
  readonly schedulers: readonly Scheduler[];
  private readonly cores: readonly EngineCore[];

  constructor(schedulers: readonly Scheduler[], cores: readonly EngineCore[]) {
    this.schedulers = schedulers;
    this.cores = cores;
  }

  get size(): number {
    return this.cores.length;
  }

  submit(request: EngineRequest): void {
    this.cores[leastLoaded(this.schedulers)]!.submit(request);
  }

  get numRunning(): number {
    return totalRunning(this.schedulers);
  }

  get numWaiting(): number {
    return totalWaiting(this.schedulers);
  }

  get numPreemptions(): number {
    return sum(this.schedulers, (s) => s.numPreemptions);
  }

  /** Steps run by all engines. */
  get numPromptTokensComputed(): number {
    return sum(this.cores, (c) => c.numPromptTokensComputed);
  }

  get numSteps(): number {
    return sum(this.cores, (c) => c.numSteps);
  }
}

/** The index of the scheduler with the fewest requests (running + waiting); the lowest on a tie. */
export function leastLoaded(
  schedulers: readonly { running: readonly unknown[]; waiting: readonly unknown[] }[],
): number {
  let best = 0;
  let bestLoad = Number.POSITIVE_INFINITY;
  for (const [i, s] of schedulers.entries()) {
    const load = s.running.length + s.waiting.length;
    if (load < bestLoad) {
      best = i;
      bestLoad = load;
    }
  }
  return best;
}

/** Requests running in all of `schedulers` (the engine's gauge and load report). */
export function totalRunning(schedulers: readonly Scheduler[]): number {
  return sum(schedulers, (s) => s.running.length);
}

/** Requests waiting (preempted ones included) in all of `schedulers`. */
export function totalWaiting(schedulers: readonly Scheduler[]): number {
  return sum(schedulers, (s) => s.waiting.length);
}

function sum<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((n, item) => n + value(item), 0);
}

// Expectations (as in the ReplicaSet controller): the pods this operator just created or deleted,
// until its informer cache shows it. A reconcile that runs before the cache caught up then sees
// its own writes (a created pod as pending, a deleted one as terminating) instead of creating or
// deleting again. An expectation the cache never confirms lapses after ttlMs.
import type { Clock } from "../../services/kernel/clock.ts";
import type { ObservedPod } from "../placement/pod-state.ts";

interface Expected {
  pod: ObservedPod;
  kind: "created" | "deleted";
  until: number;
}

export class Expectations {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #byModel = new Map<string, Map<string, Expected>>();

  constructor(clock: Clock, ttlMs = 30_000) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  created(model: string, pods: readonly ObservedPod[]): void {
    this.#add(model, pods, "created");
  }

  deleted(model: string, pods: readonly ObservedPod[]): void {
    this.#add(model, pods, "deleted");
  }

  forget(model: string): void {
    this.#byModel.delete(model);
  }

  /** The cache's pods of a model, corrected by what it does not show yet. */
  adjust(model: string, cached: readonly ObservedPod[]): ObservedPod[] {
    const expected = this.#byModel.get(model);
    if (!expected) return [...cached];
    const now = this.#clock.now();
    const byName = new Map(cached.map((p) => [p.name, p]));
    for (const [name, e] of expected) {
      const seen = byName.get(name);
      const confirmed = e.kind === "created" ? seen !== undefined : seen === undefined || seen.terminating;
      if (confirmed || now >= e.until) expected.delete(name);
      else if (e.kind === "created") byName.set(name, e.pod);
      else if (seen) byName.set(name, { ...seen, ready: false, terminating: true });
    }
    if (expected.size === 0) this.#byModel.delete(model);
    return [...byName.values()];
  }

  #add(model: string, pods: readonly ObservedPod[], kind: Expected["kind"]): void {
    if (pods.length === 0) return;
    const expected = this.#byModel.get(model) ?? new Map<string, Expected>();
    const until = this.#clock.now() + this.#ttlMs;
    for (const pod of pods) expected.set(pod.name, { pod, kind, until });
    this.#byModel.set(model, expected);
  }
}

// Whether the workers serve the model under the name its router expects (spec.model.servedName, else
// metadata.name). The router routes a request only to workers whose ListModels reported that name, so a
// replica whose pods are Ready but serve another name (a worker image that ignores TESSERA_MODEL_NAME, a
// pool that overrides it) is unservable: the model must not be Ready. The check asks each ready entry
// pod (stage 0, rank 0: the one the router calls) once, and keeps its answer as long as the pod keeps its
// name and IP (a worker cannot change its served name without a new pod); an answer that failed is
// asked again on the next reconcile. servedNameProblem turns the answers into the Ready condition's
// reason (pure).
import { WORKER_GRPC_PORT } from "../../services/api/group.ts";
import type { Role } from "../../services/api/inference-model-status.ts";
import type { ObservedPod } from "../placement/pod-state.ts";
import type { WorkerModels, WorkerPodRef } from "./worker-models.ts";

/** A worker's answer: the names it serves, or why it could not be asked. */
export type ServedNamesAnswer = { names: readonly string[] } | { error: string };

/** The answers of a model's ready entry pods, by pod name. */
export type ServedNamesByPod = ReadonlyMap<string, ServedNamesAnswer>;

/** Ready entry pods with an address: the pods the router sends requests to. */
export function entryPods(pods: readonly ObservedPod[]): ObservedPod[] {
  return pods.filter((p) => p.stage === 0 && p.rank === 0 && p.ready && !p.terminating && p.podIP);
}

export class ServedNames {
  readonly #workers: WorkerModels;
  /** Per model key: the answers kept, by `pod@ip`. */
  readonly #kept = new Map<string, Map<string, ServedNamesAnswer>>();

  constructor(workers: WorkerModels) {
    this.#workers = workers;
  }

  /** The answers of the model's ready entry pods, asking those not answered yet. */
  /** `tls`: the model's pods serve mutual TLS (spec.tls.secretName), with certificates naming `serverName`. */
  async observe(
    key: string,
    namespace: string,
    pods: readonly ObservedPod[],
    tls?: WorkerPodRef["tls"],
  ): Promise<ServedNamesByPod> {
    const before = this.#kept.get(key);
    const kept = new Map<string, ServedNamesAnswer>();
    const byPod = new Map<string, ServedNamesAnswer>();
    await Promise.all(
      entryPods(pods).map(async (pod) => {
        const id = `${pod.name}@${pod.podIP}`;
        const answer = before?.get(id) ?? (await this.#ask(namespace, pod, tls));
        if ("names" in answer) kept.set(id, answer);
        byPod.set(pod.name, answer);
      }),
    );
    this.#kept.set(key, kept);
    return byPod;
  }

  forget(key: string): void {
    this.#kept.delete(key);
  }

  async #ask(namespace: string, pod: ObservedPod, tls: WorkerPodRef["tls"]): Promise<ServedNamesAnswer> {
    try {
      const endpoint = `${pod.podIP}:${WORKER_GRPC_PORT}`;
      return { names: await this.#workers.servedNames({ namespace, name: pod.name, endpoint, tls }) };
    } catch (err) {
      return { error: `${pod.name}: ${(err as Error).message}` };
    }
  }
}

export interface ServedNameProblem {
  reason: "ServedNameMismatch" | "ServedNameUnknown";
  message: string;
}

/**
 * Why no ready replica of `role` serves `expected`, or undefined when one does (or none is ready: the
 * replica counts say that). A worker that answered with other names is a mismatch; one that could not be
 * asked leaves it unknown, which is not Ready either.
 */
export function servedNameProblem(
  expected: string,
  role: Role,
  live: readonly ObservedPod[],
  answers: ServedNamesByPod,
): ServedNameProblem | undefined {
  const entries = entryPods(live).filter((p) => p.role === role);
  const got = entries.map((p) => answers.get(p.name));
  if (entries.length === 0 || got.some((a) => a && "names" in a && a.names.includes(expected)))
    return undefined;
  const workers = role === "both" ? "workers" : `${role} workers`;
  const served = [...new Set(got.flatMap((a) => (a && "names" in a ? a.names : [])))].sort();
  if (served.length > 0 || got.some((a) => a && "names" in a))
    return {
      reason: "ServedNameMismatch",
      message: `${workers} serve ${served.map((n) => JSON.stringify(n)).join(", ") || "no model"}, the model is served as ${JSON.stringify(expected)}`,
    };
  const errors = got.flatMap((a) => (a && "error" in a ? [a.error] : []));
  return {
    reason: "ServedNameUnknown",
    message:
      errors.length > 0
        ? `cannot ask the ${workers} which model they serve (ListModels): ${errors[0]} (an operator that cannot reach the worker pods runs with --no-served-name-check)`
        : `waiting for the ${workers} to say which model they serve`,
  };
}

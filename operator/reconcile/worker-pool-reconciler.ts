// Reconciles a WorkerPool's status: the capacity its models use (pods, Ready pods, GPUs requested)
// and a Ready condition (False below minPods, or when the spec cannot be read).
import { API_VERSION, LABELS, WORKER_POOLS } from "../../services/api/group.ts";
import type { WorkerPool, WorkerPoolStatus } from "../../services/api/kinds.ts";
import { workerPoolSpecSchema } from "../../services/api/worker-pool.ts";
import { type KubeObject, splitKey } from "../../services/kube/kube-object.ts";
import { formatTime } from "../../services/kube/kube-time.ts";
import type { ReconcileOutcome } from "../../services/kube/reconcile-loop.ts";
import { observePod } from "../placement/pod-state.ts";
import { canonicalJson } from "../placement/revision.ts";
import { type ConditionState, withTransitions } from "./conditions.ts";
import type { ReconcilerDeps } from "./reconciler-deps.ts";

export const GPU_RESOURCE = "nvidia.com/gpu";

function gpusOf(pod: KubeObject): number {
  const containers = ((pod["spec"] as { containers?: unknown[] } | undefined)?.containers ?? []) as {
    resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  }[];
  return containers.reduce((sum, c) => {
    const amount = Number(c.resources?.requests?.[GPU_RESOURCE] ?? c.resources?.limits?.[GPU_RESOURCE] ?? 0);
    return sum + (Number.isFinite(amount) ? amount : 0);
  }, 0);
}

export function poolStatus(pool: WorkerPool, pods: readonly KubeObject[], now: string): WorkerPoolStatus {
  const generation = pool.metadata.generation ?? 0;
  const parsed = workerPoolSpecSchema.safeParse(pool.spec);
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  const inUse = live.length;
  const models = new Set(live.map((p) => p.metadata.labels?.[LABELS.model] ?? ""));
  let ready: ConditionState = {
    type: "Ready",
    status: "True",
    reason: "Available",
    message: `${inUse} pods in use`,
  };
  if (!parsed.success)
    ready = {
      type: "Ready",
      status: "False",
      reason: "InvalidSpec",
      message: parsed.error.issues[0]?.message ?? "",
    };
  else if (inUse < parsed.data.minPods)
    ready = {
      type: "Ready",
      status: "False",
      reason: "BelowMinPods",
      message: `${inUse} of at least ${parsed.data.minPods} pods in use`,
    };
  return {
    observedGeneration: generation,
    podsInUse: inUse,
    readyPods: live.filter((p) => observePod(p)?.ready === true).length,
    gpusInUse: live.reduce((sum, p) => sum + gpusOf(p), 0),
    ...(parsed.success ? { podsAvailable: Math.max(0, parsed.data.maxPods - inUse) } : {}),
    models: models.size,
    conditions: withTransitions([ready], pool.status?.conditions, generation, now),
  };
}

export class WorkerPoolReconciler {
  readonly #deps: ReconcilerDeps;

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
  }

  async reconcile(key: string): Promise<ReconcileOutcome | undefined> {
    const { namespace, name } = splitKey(key);
    const pool = this.#deps.cache.pool(namespace, name);
    if (!pool) return undefined;
    const status = poolStatus(
      pool,
      this.#deps.cache.podsInPool(namespace, name),
      formatTime(this.#deps.clock.now()),
    );
    if (canonicalJson(status) === canonicalJson(pool.status ?? {})) return undefined;
    await this.#deps.client.apply(
      WORKER_POOLS,
      namespace,
      { apiVersion: API_VERSION, kind: "WorkerPool", metadata: { name, namespace }, status },
      { subresource: "status", force: true },
    );
    return undefined;
  }
}

// Reconciles one InferenceModel. Reads like a script:
//   get (gone = done) -> deleting? clean up behind the finalizer -> observe (pods, pools) ->
//   plan (planPlacement + planRollout, pure) -> apply (server-side apply, one field manager: the
//   worker pods, and the model's router, router-apply.ts) -> ask new ready entry workers which model
//   they serve (served-names.ts) -> status (written only when it changed).
// Everything read comes from informer caches; a 409 from any write just requeues the key.
import { API_VERSION, CLEANUP_FINALIZER, INFERENCE_MODELS, LABELS } from "../../services/api/group.ts";
import { inferenceModelSpecSchema } from "../../services/api/inference-model-spec.ts";
import type { InferenceModelStatus } from "../../services/api/inference-model-status.ts";
import type { InferenceModel, InferenceModelSpec } from "../../services/api/kinds.ts";
import { workerPoolSpecSchema } from "../../services/api/worker-pool.ts";
import { splitKey } from "../../services/kube/kube-object.ts";
import { formatTime } from "../../services/kube/kube-time.ts";
import type { ReconcileOutcome } from "../../services/kube/reconcile-loop.ts";
import { PODS, SERVICES } from "../../services/kube/resources.ts";
import { type ModelRef, type PoolView, planPlacement } from "../placement/planner.ts";
import { type ObservedPod, observePod, plannedPod } from "../placement/pod-state.ts";
import { shardPod } from "../placement/pod-template.ts";
import { canonicalJson } from "../placement/revision.ts";
import { planRollout, type RolloutActions } from "../placement/rollout.ts";
import { findCondition } from "./conditions.ts";
import { Expectations } from "./expectations.ts";
import { addFinalizer, finalizeModel } from "./finalizer.ts";
import { invalidSpecStatus, modelStatus } from "./model-status.ts";
import type { ReconcilerDeps } from "./reconciler-deps.ts";
import { RouterApplier, type RouterState } from "./router-apply.ts";
import { ServedNames } from "./served-names.ts";
import { liveUpToDate, workersService } from "./workers-service.ts";

/** How soon a worker that could not say which model it serves is asked again. */
const ASK_AGAIN_MS = 5_000;

export class InferenceModelReconciler {
  readonly #deps: ReconcilerDeps;
  readonly #expectations: Expectations;
  readonly #router: RouterApplier;
  readonly #servedNames: ServedNames | undefined;
  /** Per model: the status this operator last wrote, and the one it replaced (see #writeStatus). */
  readonly #written = new Map<string, { before: string; after: string }>();

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#expectations = new Expectations(deps.clock);
    this.#router = new RouterApplier(deps);
    this.#servedNames = deps.workerModels ? new ServedNames(deps.workerModels) : undefined;
  }

  async reconcile(key: string): Promise<ReconcileOutcome | undefined> {
    const { namespace, name } = splitKey(key);
    const model = this.#deps.cache.model(namespace, name);
    if (!model) {
      this.#expectations.forget(key);
      this.#written.delete(key);
      this.#router.forget(key);
      this.#servedNames?.forget(key);
      return undefined;
    }
    if (model.metadata.deletionTimestamp) return finalizeModel(model, this.#deps);
    if (!model.metadata.finalizers?.includes(CLEANUP_FINALIZER)) await addFinalizer(model, this.#deps);

    const parsed = inferenceModelSpecSchema.safeParse(model.spec);
    if (!parsed.success) {
      const message = parsed.error.issues.map((i) => `spec.${i.path.join(".")}: ${i.message}`).join("; ");
      this.#deps.events.record(model, "Warning", "InvalidSpec", message);
      await this.#writeStatus(
        key,
        model,
        invalidSpecStatus(model.status, model.metadata.generation ?? 0, message, this.#now()),
      );
      return undefined;
    }
    const spec = parsed.data;
    const ref: ModelRef = { namespace, name, uid: model.metadata.uid ?? "" };

    const observed = this.#expectations.adjust(key, this.#observe(ref));
    const pools = this.#poolViews(ref, spec);
    const plan = planPlacement({ model: ref, spec, pools });
    const actions = planRollout(plan, observed);

    await this.#apply(key, model, ref, spec, pools, actions, observed);
    const router = await this.#applyRouter(key, ref, spec, pools);
    const tls = spec.tls?.secretName ? { serverName: spec.tls.serverName } : undefined;
    const servedNames = await this.#servedNames?.observe(key, namespace, observed, tls);
    const status = modelStatus({
      name,
      generation: model.metadata.generation ?? 0,
      spec,
      plan,
      observed,
      actions,
      previous: model.status,
      now: this.#now(),
      router,
      servedNames,
    });
    await this.#writeStatus(key, model, status);
    // A worker that could not be asked which model it serves is asked again.
    const unanswered = [...(servedNames?.values() ?? [])].some((a) => "error" in a);
    return unanswered ? { requeueAfterMs: ASK_AGAIN_MS } : undefined;
  }

  #observe(ref: ModelRef): ObservedPod[] {
    const pods = this.#deps.cache.podsOfModel(ref.namespace, ref.name);
    const owned = pods.filter((p) => p.metadata.ownerReferences?.some((o) => o.uid === ref.uid) ?? false);
    return owned.map(observePod).filter((p): p is ObservedPod => p !== undefined);
  }

  #poolViews(ref: ModelRef, spec: InferenceModelSpec): Map<string, PoolView> {
    const names = new Set(
      [spec.pools.default, spec.pools.prefill, spec.pools.decode].filter((n) => n !== undefined),
    );
    const views = new Map<string, PoolView>();
    for (const poolName of names) {
      const pool = this.#deps.cache.pool(ref.namespace, poolName);
      const parsed = workerPoolSpecSchema.safeParse(pool?.spec);
      if (!pool || pool.metadata.deletionTimestamp || !parsed.success) continue;
      const others = this.#deps.cache
        .podsInPool(ref.namespace, poolName)
        .filter((p) => p.metadata.labels?.[LABELS.model] !== ref.name && !p.metadata.deletionTimestamp);
      views.set(poolName, { spec: parsed.data, podsUsedByOthers: others.length });
    }
    return views;
  }

  async #apply(
    key: string,
    model: InferenceModel,
    ref: ModelRef,
    spec: InferenceModelSpec,
    pools: ReadonlyMap<string, PoolView>,
    actions: RolloutActions,
    observed: readonly ObservedPod[],
  ): Promise<void> {
    const { client, cache, events } = this.#deps;
    // Peers find each other through the headless Service; a one-pod group has no peers. (A Service
    // left from an earlier multi-pod spec stays until the model goes: it costs nothing.)
    const service = workersService(ref);
    const grouped = spec.parallelism.tensor * spec.parallelism.pipeline > 1;
    if (grouped && !liveUpToDate(cache.service(ref.namespace, service.metadata.name ?? ""), service))
      await client.apply(SERVICES, ref.namespace, service, { force: true });
    await Promise.all(
      actions.create.map(({ group, shard }) => {
        const pool = pools.get(group.pool);
        if (!pool) return undefined;
        return client.apply(PODS, ref.namespace, shardPod(ref, spec, pool.spec, group, shard), {
          force: true,
        });
      }),
    );
    this.#expectations.created(
      key,
      actions.create.map(({ group, shard }) => plannedPod(group, shard)),
    );
    await Promise.all(actions.delete.map((d) => client.delete(PODS, ref.namespace, d.name)));
    const deleted = new Set(actions.delete.map((d) => d.name));
    this.#expectations.deleted(
      key,
      observed.filter((p) => deleted.has(p.name)),
    );
    if (actions.create.length > 0)
      events.record(
        model,
        "Normal",
        "CreatedPods",
        `created ${describePods(actions.create.map((c) => c.shard.podName))}`,
      );
    const byReason = Map.groupBy(actions.delete, (d) => d.reason);
    for (const [reason, pods] of byReason) {
      const type = reason === "GroupFailed" ? "Warning" : "Normal";
      events.record(
        model,
        type,
        `DeletedPods${reason}`,
        `deleted ${describePods(pods.map((p) => p.name))} (${reason})`,
      );
    }
  }

  /** The router runs with the default pool's image and command; without that pool it waits. */
  async #applyRouter(
    key: string,
    ref: ModelRef,
    spec: InferenceModelSpec,
    pools: ReadonlyMap<string, PoolView>,
  ): Promise<RouterState> {
    const pool = pools.get(spec.pools.default);
    if (pool) await this.#router.apply(key, ref, spec, pool.spec);
    return this.#router.state(ref);
  }

  /**
   * Writes the status when it differs from the cached one, unless the cache simply has not caught
   * up with this operator's last write (same status replaced, same status computed): that would
   * write it, and record its Events, twice.
   */
  async #writeStatus(key: string, model: InferenceModel, status: InferenceModelStatus): Promise<void> {
    const after = canonicalJson(status);
    const before = canonicalJson(model.status ?? {});
    const last = this.#written.get(key);
    if (after === before || (last?.after === after && last.before === before)) return;
    this.#recordTransitions(model, status);
    const { namespace = "", name = "" } = model.metadata;
    await this.#deps.client.apply(
      INFERENCE_MODELS,
      namespace,
      { apiVersion: API_VERSION, kind: "InferenceModel", metadata: { name, namespace }, status },
      { subresource: "status", force: true },
    );
    this.#written.set(key, { before, after });
  }

  /** Events for a person reading `kubectl describe`: the model became (not) Ready, or Degraded and why. */
  #recordTransitions(model: InferenceModel, status: InferenceModelStatus): void {
    const { events } = this.#deps;
    const was = (type: "Ready" | "Degraded") => findCondition(model.status?.conditions, type);
    const ready = findCondition(status.conditions, "Ready");
    if (ready?.status === "True" && was("Ready")?.status !== "True")
      events.record(model, "Normal", "Ready", ready.message);
    if (ready?.status === "False" && was("Ready")?.status === "True")
      events.record(model, "Warning", "NotReady", `${ready.reason}: ${ready.message}`);
    const degraded = findCondition(status.conditions, "Degraded");
    const before = was("Degraded");
    if (degraded?.status === "True" && (before?.status !== "True" || before.reason !== degraded.reason))
      events.record(model, "Warning", degraded.reason, degraded.message);
    if (degraded?.status === "False" && before?.status === "True")
      events.record(model, "Normal", "Recovered", "no longer degraded");
  }

  #now(): string {
    return formatTime(this.#deps.clock.now());
  }
}

function describePods(names: string[]): string {
  const shown = names.slice(0, 4).join(", ");
  return `${names.length} pod${names.length === 1 ? "" : "s"}: ${shown}${names.length > 4 ? ", ..." : ""}`;
}

// The operator: informers over InferenceModels, WorkerPools and the worker pods and Services it
// made (router Deployments included); a controller per kind; leader election so one replica acts
// at a time. Events route keys: a pod, Service or Deployment change requeues its model (label), a pool change requeues the pool and the
// models placed in it, a deleted pod requeues the pool's models that lacked capacity.

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { INFERENCE_MODELS, LABELS, MANAGED_BY, WORKER_POOLS } from "../services/api/group.ts";
import type { InferenceModel, WorkerPool } from "../services/api/kinds.ts";
import { type Clock, systemClock } from "../services/kernel/clock.ts";
import { createLogger, type Logger } from "../services/kernel/log.ts";
import { Metrics } from "../services/kernel/telemetry/metrics.ts";
import { ApiEventRecorder, kubeClientEvents } from "../services/kube/event-recorder.ts";
import { Informer } from "../services/kube/informer.ts";
import type { KubeClient } from "../services/kube/kube-client.ts";
import { type KubeObject, objectKey } from "../services/kube/kube-object.ts";
import { DEFAULT_LEASE_TIMING, LeaderElector } from "../services/kube/leader-election.ts";
import { ReconcileLoop } from "../services/kube/reconcile-loop.ts";
import { DEPLOYMENTS, PODS, SERVICES } from "../services/kube/resources.ts";
import { OperatorMetrics } from "./controller/operator-metrics.ts";
import { informerCache } from "./reconcile/cluster-cache.ts";
import { InferenceModelReconciler } from "./reconcile/inference-model-reconciler.ts";
import { type KvStoreCleaner, RedisKeyCleaner } from "./reconcile/kv-cleanup.ts";
import type { ReconcilerDeps } from "./reconcile/reconciler-deps.ts";
import { GrpcWorkerModels, type WorkerModels } from "./reconcile/worker-models.ts";
import { WorkerPoolReconciler } from "./reconcile/worker-pool-reconciler.ts";

export interface OperatorOptions {
  client: KubeClient;
  /** Namespace to watch; "" watches all (needs the ClusterRole). */
  namespace: string;
  /** Where the leader-election Lease lives; undefined runs without election (tests, one replica). */
  leaderElection?: { namespace: string; name: string; identity?: string };
  workers?: number;
  cleanupTimeoutMs?: number;
  clock?: Clock;
  log?: Logger;
  metrics?: Metrics;
  kvCleaner?: KvStoreCleaner;
  /**
   * Asks worker pods which model names they serve (default: tessera.v1 ListModels over gRPC); null: never
   * ask, and call a model Ready on pod readiness alone (an operator that cannot reach the pods).
   */
  workerModels?: WorkerModels | null;
  /** Called when leadership is lost (the CLI exits so the pod restarts as a candidate). */
  onLostLeadership?: () => void;
}

export const MODELS_CONTROLLER = "inferencemodel";
export const POOLS_CONTROLLER = "workerpool";

export class Operator {
  readonly metrics: OperatorMetrics;
  readonly #options: OperatorOptions;
  readonly #log: Logger;
  readonly #informers;
  readonly #controllers: ReconcileLoop[];
  readonly #events: ApiEventRecorder;
  readonly #abort = new AbortController();
  #elector: LeaderElector | undefined;
  #running: Promise<void> | undefined;
  #started = false;
  #leading = false;

  constructor(options: OperatorOptions) {
    this.#options = options;
    const clock = options.clock ?? systemClock;
    const log = options.log ?? createLogger("operator");
    this.#log = log;
    this.metrics = new OperatorMetrics((options.metrics ?? new Metrics()).meter("tessera-operator"));
    const base = { namespace: options.namespace, clock, log };
    const managed = `${LABELS.managedBy}=${MANAGED_BY}`;
    this.#informers = {
      models: new Informer<InferenceModel>(options.client, INFERENCE_MODELS, base),
      pools: new Informer<WorkerPool>(options.client, WORKER_POOLS, base),
      pods: new Informer<KubeObject>(options.client, PODS, { ...base, labelSelector: managed }),
      services: new Informer<KubeObject>(options.client, SERVICES, { ...base, labelSelector: managed }),
      deployments: new Informer<KubeObject>(options.client, DEPLOYMENTS, { ...base, labelSelector: managed }),
    };
    this.metrics.watchModels(() => this.#informers.models.list());
    this.#events = new ApiEventRecorder(kubeClientEvents(options.client), {
      component: "tessera-operator",
      clock,
      log,
    });
    const deps: ReconcilerDeps = {
      client: options.client,
      cache: informerCache(this.#informers),
      events: this.#events,
      kvCleaner: options.kvCleaner ?? new RedisKeyCleaner(),
      workerModels: options.workerModels === undefined ? new GrpcWorkerModels() : options.workerModels,
      clock,
      log,
      config: { cleanupTimeoutMs: options.cleanupTimeoutMs ?? 60_000 },
    };
    const loopOptions = { clock, log, observer: this.metrics, workers: options.workers ?? 4 };
    const models = new InferenceModelReconciler(deps);
    const pools = new WorkerPoolReconciler(deps);
    this.#controllers = [
      new ReconcileLoop(MODELS_CONTROLLER, (key) => models.reconcile(key), loopOptions),
      new ReconcileLoop(POOLS_CONTROLLER, (key) => pools.reconcile(key), loopOptions),
    ];
    this.#route();
    if (options.leaderElection) {
      const { identity = `${hostname()}-${randomBytes(4).toString("hex")}`, ...lease } =
        options.leaderElection;
      this.#elector = new LeaderElector(
        options.client,
        { ...lease, identity, ...DEFAULT_LEASE_TIMING },
        { clock, log },
      );
    }
  }

  /** Starts campaigning (or leading at once without election); returns without waiting. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    if (!this.#elector) {
      this.#running = this.#lead();
      return;
    }
    this.#running = this.#elector.run(
      this.#abort.signal,
      () => void this.#lead(),
      () => {
        void this.#stopWork();
        if (!this.#abort.signal.aborted) this.#options.onLostLeadership?.();
      },
    );
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#running;
    await this.#stopWork();
    await this.#events.flush();
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** For /readyz: undefined when ready. A standby waiting for the lease is ready. */
  notReady(): string | undefined {
    if (!this.#started) return "not started";
    if (this.#leading && !Object.values(this.#informers).every((i) => i.hasSynced))
      return "informer caches not synced";
    return undefined;
  }

  /** No key queued or being reconciled (tests and benchmarks wait for it). */
  get idle(): boolean {
    return (
      this.#leading &&
      Object.values(this.#informers).every((i) => i.hasSynced) &&
      this.#controllers.every((c) => !c.queue.busy)
    );
  }

  async #lead(): Promise<void> {
    this.#leading = true;
    for (const informer of Object.values(this.#informers)) informer.start();
    await Promise.all(Object.values(this.#informers).map((i) => i.synced()));
    if (this.#abort.signal.aborted || !this.#leading) return;
    for (const controller of this.#controllers) controller.start();
    this.#log.info({ namespace: this.#options.namespace || "<all>" }, "operator running");
  }

  async #stopWork(): Promise<void> {
    this.#leading = false;
    await Promise.all(this.#controllers.map((c) => c.stop()));
    await Promise.all(Object.values(this.#informers).map((i) => i.stop()));
  }

  #route(): void {
    const [models, pools] = this.#controllers as [ReconcileLoop, ReconcileLoop];
    const { models: modelInformer, pools: poolInformer, pods, services, deployments } = this.#informers;
    const modelOf = (o: KubeObject) => o.metadata.labels?.[LABELS.model];
    const usesPool = (m: InferenceModel, pool: string) => {
      const p = (m.spec as { pools?: Record<string, unknown> } | undefined)?.pools ?? {};
      return Object.values(p).includes(pool) || (p["default"] === undefined && pool === "default");
    };
    const modelsInPool = (namespace: string, pool: string) =>
      modelInformer.list().filter((m) => m.metadata.namespace === namespace && usesPool(m, pool));
    modelInformer.onChange((_type, model) => models.queue.add(objectKey(model)));
    // A pool's spec (its generation) matters to the models placed in it; its status, which the
    // operator itself writes as pods come and go, does not (requeueing them would never settle).
    const poolGenerations = new Map<string, number | undefined>();
    poolInformer.onChange((type, pool) => {
      const key = objectKey(pool);
      pools.queue.add(key);
      const generation = type === "DELETED" ? undefined : pool.metadata.generation;
      if (type !== "DELETED" && poolGenerations.get(key) === generation) return;
      if (type === "DELETED") poolGenerations.delete(key);
      else poolGenerations.set(key, generation);
      for (const m of modelsInPool(pool.metadata.namespace ?? "", pool.metadata.name ?? ""))
        models.queue.add(objectKey(m));
    });
    pods.onChange((type, pod) => {
      const namespace = pod.metadata.namespace ?? "";
      const model = modelOf(pod);
      const pool = pod.metadata.labels?.[LABELS.pool];
      if (model) models.queue.add(`${namespace}/${model}`);
      if (!pool) return;
      pools.queue.add(`${namespace}/${pool}`);
      if (type !== "DELETED") return;
      for (const m of modelsInPool(namespace, pool))
        if (m.status?.conditions?.some((c) => c.type === "Degraded" && c.reason === "InsufficientCapacity"))
          models.queue.add(objectKey(m));
    });
    const requeueOwner = (_type: string, object: KubeObject) => {
      const model = modelOf(object);
      if (model) models.queue.add(`${object.metadata.namespace ?? ""}/${model}`);
    };
    services.onChange(requeueOwner);
    deployments.onChange(requeueOwner);
  }
}

// What the reconcilers work with: the API, the informer caches, Events, the clock and settings.

import type { Clock } from "../../services/kernel/clock.ts";
import type { Logger } from "../../services/kernel/log.ts";
import type { EventRecorder } from "../../services/kube/event-recorder.ts";
import type { KubeClient } from "../../services/kube/kube-client.ts";
import type { ClusterCache } from "./cluster-cache.ts";
import type { KvStoreCleaner } from "./kv-cleanup.ts";
import type { WorkerModels } from "./worker-models.ts";

export interface ReconcilerConfig {
  /** How long deletion may wait for cleanup before the finalizer is removed anyway. */
  cleanupTimeoutMs: number;
}

export interface ReconcilerDeps {
  client: KubeClient;
  cache: ClusterCache;
  events: EventRecorder;
  kvCleaner: KvStoreCleaner;
  /** Asks a worker pod which model names it serves (ListModels); null: the check is off. */
  workerModels: WorkerModels | null;
  clock: Clock;
  log: Logger;
  config: ReconcilerConfig;
}
